"""Secrets kept out of what the-loop publishes or logs: token-shaped strings, secret-named values,
credentials in headers and URLs, private keys; and the published form of a tool's input."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from domain.model import Comment
from domain.prompts import readable, untrusted_block

REDACTED = "[redacted]"
EXCERPT_LINES = 6  # of a file's content a request shows; the whole is in the session, on the host
EXCERPT_LINE_CHARS = 120
# string fields holding a file's text (Write, Edit, MultiEdit, NotebookEdit): summed up, not shown whole
CONTENT_KEYS = frozenset({"content", "old_string", "new_string", "new_source"})
PATH_KEYS = ("file_path", "notebook_path", "path")
SHOWN_DEPTH = 20  # levels of a tool's input a request shows: deeper, a note (the recursion is bounded)
TOO_DEEP = "[nested too deep to show here: read it whole on the host]"

_TOKENS = re.compile(
    r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}"  # GitHub: personal, OAuth, app, user-to-server, refresh
    r"|github_pat_[A-Za-z0-9_]{20,}"
    r"|sk-[A-Za-z0-9_-]{20,}"  # Anthropic (sk-ant-), OpenAI (sk-, sk-proj-)
    r"|(?:AKIA|ASIA)[A-Z0-9]{16}"  # AWS access key ids
    r"|xox[abeprs]-[A-Za-z0-9-]{10,}"  # Slack
    r"|AIza[0-9A-Za-z_-]{35}"  # Google API keys
    r"|[sr]k_(?:live|test)_[A-Za-z0-9]{10,}"  # Stripe secret and restricted keys
    r"|hf_[A-Za-z0-9]{20,}"  # Hugging Face
    r"|npm_[A-Za-z0-9]{20,}"  # npm
    r"|dckr_pat_[A-Za-z0-9_-]{20,}"  # Docker Hub
    r"|glpat-[A-Za-z0-9_-]{20,}"  # GitLab
    r"|hv[sbr]\.[A-Za-z0-9_-]{20,})"  # Vault service, batch and recovery tokens
)
_PRIVATE_KEY = re.compile(r"(-----BEGIN [A-Z ]*PRIVATE KEY-----).*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.S)
_AUTHORIZATION = re.compile(
    r"(?i)(\b(?:proxy-)?authorization[ \t]*:[ \t]*)(?:(?:bearer|basic|token|digest|bot|negotiate)[ \t]+)?[^\s\"'\\,;]+"
)
_URL_PASSWORD = re.compile(r"((?<![a-z0-9+.-])[a-z][a-z0-9+.-]*://[^/\s:@'\"]+:)[^/\s@'\"]+(@)", re.I)
_USER_OPTION = re.compile(r"((?:^|\s)(?:-u|--user)[ =]?['\"]?[^\s:'\"]+:)[^\s'\"]+")
# NAME=value, NAME: value, "name": "value", --name=value: the name's last word says it is a secret.
# A name starts only where a run of name characters starts: else a long run is tried from each of
# its characters, each try backtracking over the rest (quadratic)
_NAMED = re.compile(
    r"(?<![A-Za-z0-9_.-])(?P<lead>-{0,2})(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)"
    r"(?P<sep>[\"']?[ \t]*(?<![=!<>])[=:](?![=:])[ \t]*)"
    r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'&;,|)}\]]+)"
)
# --name value, NAME value: the value only looked ahead at, so it can be the next try's name
# (`set aws_secret_access_key wJal…`: `set` is tried with the value `aws_secret_access_key`, then that)
_SPACED = re.compile(
    r"(?<![A-Za-z0-9_.$-])(?P<lead>-{0,2})(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)"
    r"(?=[ \t]+(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[A-Za-z0-9_/+.~][^\s\"'&;,|)}\]]*))"
)
_SECRET_WORDS = frozenset(
    {"key", "apikey", "token", "secret", "password", "passwd", "pwd", "credential", "credentials", "auth", "cookie"}
)
_REFERENCE = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")  # `process.env.API_KEY`, `settings.token`
_WORDLIKE = re.compile(r"[A-Za-z][a-z]*|[0-9]+|v[0-9]+")
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_ENV_LINE = re.compile(
    r"^(?P<head>[ \t]*(?:export[ \t]+)?[A-Za-z_][A-Za-z0-9_.]*[ \t]*=[ \t]*)(?P<value>.+?)[ \t]*$", re.M
)
_ENV_FILE = re.compile(r"(?:^|/)(?:\.env(?:\.[^/]*)?|[^/]*\.env|\.envrc)$")


def redact(text: str) -> str:
    """`text` with every secret it shows as `[redacted]`: token-shaped strings (GitHub, Anthropic,
    OpenAI, AWS, Slack, Google), private key blocks, `Authorization:` credentials, passwords in
    URLs and `-u user:password`, and the value given to a secret-named key (`GITHUB_TOKEN=…`,
    `password: …`, `--api-key=…`, `--token …`, `aws_secret_access_key wJal…`). Ordinary text, and
    code reading a secret from elsewhere, stay."""
    text = _PRIVATE_KEY.sub(lambda m: f"{m.group(1)}\n{REDACTED}", text)
    text = _TOKENS.sub(REDACTED, text)
    text = _AUTHORIZATION.sub(lambda m: m.group(1) + REDACTED, text)
    text = _URL_PASSWORD.sub(lambda m: m.group(1) + REDACTED + m.group(2), text)
    text = _USER_OPTION.sub(lambda m: m.group(1) + REDACTED, text)
    return _spaced(_NAMED.sub(_named, text))


def _named(match: re.Match[str]) -> str:
    value = match.group("value")
    if not secret_name(match.group("name")) or value == REDACTED or value.startswith("$"):
        return match.group()  # `$TOKEN` names a secret without showing it
    follows = match.string[match.end() : match.end() + 1]
    if follows in {"(", "["} or "[" in value or "(" in value or _reference(value, match.group("sep")):
        return match.group()  # code reading it from elsewhere: `key = os.environ['KEY']`, `process.env.KEY`
    quote = value[0] if value[0] in "\"'" and len(value) > 1 else ""
    return f"{match.group('lead')}{match.group('name')}{match.group('sep')}{quote}{REDACTED}{quote}"


def _spaced(text: str) -> str:
    """Each value a secret-named option (`--password hunter2`) or word (`aws_secret_access_key
    wJal…`) is followed by after a space, redacted."""
    parts, done = [], 0
    for match in _SPACED.finditer(text):
        if match.start() >= done and _spaced_secret(match):
            value = match.group("value")
            quote = value[0] if value[0] in "\"'" else ""
            parts += [text[done : match.start("value")], f"{quote}{REDACTED}{quote}"]
            done = match.end("value")
    return "".join(parts) + text[done:]


def _spaced_secret(match: re.Match[str]) -> bool:
    """An option's next word is its value. A word's next is only when it cannot be prose or code:
    random-looking, or neither a plain word nor a path after a name of several words
    (`api_key is None`, `docker secret create db_password ./pw.txt` stay)."""
    name, value = match.group("name"), match.group("value").strip("\"'")
    if not secret_name(name):
        return False
    if match.group("lead"):
        return True
    return high_entropy(value) or (len(_WORDS.findall(name)) > 1 and not value.isalpha() and "/" not in value)


def _reference(value: str, sep: str) -> bool:
    """`api_key = settings.api_key` in code (spaced), not `TOKEN=eyJhbGci.eyJzdWIi.c2ln` (a JWT)."""
    dotted = _REFERENCE.fullmatch(value) is not None
    return dotted and sep != sep.strip() and not any(high_entropy(part) for part in value.split("."))


def secret_name(name: str) -> bool:
    """A name whose last word names a secret: `GITHUB_TOKEN`, `apiKey`, `db.password`, `X-Api-Key`;
    not `key` alone, which names anything (`Primary key: id`)."""
    words = [w.lower() for w in _WORDS.findall(name)]
    return bool(words) and words[-1] in _SECRET_WORDS and words != ["key"]


def high_entropy(value: str) -> bool:
    """A random-looking string (a key, a token) rather than a word, a number or a path."""
    if len(value) < 16 or not re.fullmatch(r"[A-Za-z0-9+/=_.~-]+", value):
        return False
    if all(_WORDLIKE.fullmatch(part) for part in re.split(r"[-_./~+=]", value) if part):
        return False  # `my-app-staging-v2`, `eu-west-1`: words and numbers
    kinds = sum(bool(re.search(pattern, value)) for pattern in ("[a-z]", "[A-Z]", "[0-9]"))
    counts = Counter(value)
    bits = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    return kinds >= 2 and bits >= 3.5


def redact_env(text: str) -> str:
    """An env file's text redacted, and each `NAME=value` whose value looks random too."""

    def line(match: re.Match[str]) -> str:
        value = match.group("value")
        bare = value.strip("\"'")
        return match.group("head") + REDACTED if high_entropy(bare) else match.group()

    return _ENV_LINE.sub(line, redact(text))


def published_input(tool_input: Mapping[str, Any], *, limit: int) -> str:
    """The fenced block a request's comment shows of a tool's input: every string redacted, and a
    file's text (a `Write`'s content, an `Edit`'s sides) as its size and a short excerpt."""
    # a string is cut before it is redacted, past where the block's own cap cuts it anyway
    shown = _published(dict(tool_input), env=False, longest=2 * limit)
    return untrusted_block(json.dumps(shown, indent=2, ensure_ascii=False), "json", limit=limit)


def _published(value: Any, *, env: bool, longest: int, key: str = "", depth: int = 0) -> Any:
    if isinstance(value, Mapping | list) and depth >= SHOWN_DEPTH:
        return TOO_DEEP
    if isinstance(value, Mapping):
        path = next((value[k] for k in PATH_KEYS if isinstance(value.get(k), str)), "")
        env = env or bool(_ENV_FILE.search(path))
        return {
            redact(str(k)[:longest]): _published(v, env=env, longest=longest, key=str(k), depth=depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_published(v, env=env, longest=longest, key=key, depth=depth + 1) for v in value]
    return _published_text(value, env=env, longest=longest, key=key) if isinstance(value, str) else value


def _published_text(value: str, *, env: bool, longest: int, key: str) -> Any:
    if key in CONTENT_KEYS:
        return excerpt(value, env=env)
    if secret_name(key) and value:
        return REDACTED
    return redact(value[:longest])


def excerpt(text: str, *, env: bool = False) -> dict[str, Any]:
    """A file's text as published: its size, and its first lines redacted and cut short."""
    lines = text.splitlines()
    # enough to redact a secret spanning a few lines, or reaching past where a line is cut
    head = "\n".join(line[: EXCERPT_LINE_CHARS * 8] for line in lines[: EXCERPT_LINES * 4])
    shown = (redact_env(head) if env else redact(head)).splitlines()[:EXCERPT_LINES]
    cut = [line if len(line) <= EXCERPT_LINE_CHARS else line[:EXCERPT_LINE_CHARS] + "…" for line in shown]
    return {"bytes": len(text.encode("utf-8", "surrogatepass")), "lines": len(lines), "first_lines": cut}


FIRST_WORDS = 80  # characters of a comment the event log keeps: enough to know it by on the page


def first_words(text: str, limit: int = FIRST_WORDS) -> str:
    """The start of an untrusted text, to know it by: secrets redacted, control and bidirectional
    characters dropped, on one line, cut with `…`. Read by a person on the page only; never put in
    a comment the-loop posts."""
    flat = " ".join(readable(redact(text)).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def comment_fields(comment: Comment) -> dict[str, Any]:
    """What the event log says of a comment it takes in: who wrote it, its first words, its address."""
    return {"author": comment.author or "", "excerpt": first_words(comment.body), "url": comment.url}
