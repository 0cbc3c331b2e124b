"""Steering from GitHub: control comments (`the-loop pause` …), the status reply, the trigger phrase.

A control comment is one whose first line of text is `the-loop <verb>`, `/the-loop <verb>` or
`@the-loop <verb>` (any case, nothing else on that line). It steers the item and is never delivered
to the agent. A line that is a command to the-loop not written as one (`@the-loop: pause`,
`the-loop pause.`, a word it does not know) is not delivered either: it is answered with how to
write one. Its text is untrusted like any comment's: nothing of it is ever echoed into what the-loop
posts.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from datetime import datetime

from domain.markdown import indent
from domain.model import AGENT_MARKER
from domain.refs import WorkItemRef

# `@the-loop` as people mention it on GitHub; a colon or comma after the name is how a sentence to
# it may start too (`@the-loop: please look`), so it makes a command only when nothing else follows
_CONTROL_LINE = re.compile(r"[/@]?the-loop(?P<mark>[:,]?)[ \t]+(?P<word>\S+)(?:[ \t]+(?P<rest>.*))?", re.IGNORECASE)
_WORDS = re.compile(r"\w")
_HARNESS_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")  # a harness's name as configuration keys are written


class Verb(enum.Enum):
    PAUSE = "pause"  # later comments wait: not attempted, no budget spent; the session runs on
    RESUME = "resume"  # the waiting comments are delivered, in order
    STOP = "stop"  # the session is closed as on an upstream close; later comments are not delivered
    START = "start"  # spawn now (whatever spawnOnUnmatched says), or undo a stop; `start codex`: with that agent
    STATUS = "status"  # one reply: session, agent, last delivery, comments waiting, paused or not
    # answers to what the agent asks (domain/asks.py); the rest of the line is theirs
    ALLOW = "allow"  # the tool it asks for runs (`allow always`: and later ones of the session)
    DENY = "deny"  # it does not; the rest of the comment is the reason the agent is told
    ANSWER = "answer"  # the option chosen for its question, by number (or by the option's text)


_TAKES_TEXT = {Verb.ALLOW, Verb.DENY, Verb.ANSWER}


@dataclass(frozen=True, slots=True)
class Control:
    """A control comment's command; `verb` None: a word the-loop does not know."""

    verb: Verb | None
    text: str = ""  # ALLOW, DENY, ANSWER: what follows the verb (DENY: all the rest); START: the harness named


def control_of(body: str) -> Control | None:
    """The command a comment gives, or None for a comment meant for the agent."""
    match = _CONTROL_LINE.fullmatch(first_text_line(body) or "")
    if match is None:
        return None
    word, rest = match["word"].casefold(), (match["rest"] or "").strip()
    verb = next((verb for verb in Verb if verb.value == word), None)
    if verb in _TAKES_TEXT:
        if match["mark"]:
            return Control(None)  # `@the-loop: allow 3`: an answer, not as one is written
        if verb is Verb.DENY:  # the lines after the first are the reason too
            rest = f"{rest}\n{body.split(match.group(0), 1)[-1].strip()}".strip()
        return Control(verb, rest)
    if verb is Verb.START and not match["mark"] and _HARNESS_NAME.fullmatch(rest):
        return Control(verb, rest)  # `the-loop start codex`: the agent it asks for
    if _WORDS.search(rest):
        return None  # more words on the line: a sentence for the agent
    return Control(verb) if verb and not (match["mark"] or rest) else Control(None)


def first_text_line(body: str) -> str | None:
    """The comment's first line of text as Markdown shows it, stripped; None when the first thing
    shown is not a paragraph (an indented or fenced code block, a block quote). Blank lines and HTML
    comments before it are skipped: nothing of them is shown. Up to three leading spaces still make a
    paragraph in Markdown, so they do here."""
    lines = iter(body.splitlines())
    for line in lines:
        if not line.strip():
            continue
        if indent(line) >= 4:
            return None  # an indented code block
        text = line.strip()
        if text.startswith(("```", "~~~", ">")):
            return None  # a fenced code block, a block quote
        if not text.startswith("<!--"):
            return text
        # an HTML comment runs to the line holding `-->`, all of that line with it
        closing = text[4:]
        while "-->" not in closing:
            closing = next(lines, "-->")
    return None


def triggered(body: str, trigger: str) -> bool:
    """With `routing.trigger` set, only a comment holding it (any case) is for the agent."""
    return not trigger or trigger.casefold() in body.casefold()


@dataclass(frozen=True, slots=True)
class Status:
    """What a status reply says, all of it the-loop's own values."""

    item: WorkItemRef
    state: str  # the item's state in one line, as every view says it (`domain.fleet.ItemStatus.line`)
    session: str  # e.g. "loop-github-acme-widgets-7: active, tmux live" or "none yet"
    agent: str  # the harness's state and its last receipt
    last_delivery: str  # e.g. "poll-comment-123, confirmed by receipt at 10:02:03 UTC"
    waiting: int
    paused: bool
    stopped: bool
    spent: str = ""  # what its turns cost so far, e.g. "$0.0138 estimated (2 turns, 8,400 tokens)"; "" none yet


def status_reply(status: Status) -> str:
    flags = ", ".join(f for f, on in (("paused", status.paused), ("stopped", status.stopped)) if on) or "no"
    return (
        f"{AGENT_MARKER}\n"
        f"> 🤖 **the-loop** status of {status.item}\n\n"
        f"- State: {status.state}\n"
        f"- Session: {status.session}\n"
        f"- Agent: {status.agent}\n"
        f"- Last delivery: {status.last_delivery}\n"
        f"- Comments waiting: {status.waiting}\n"
        f"- Paused or stopped: {flags}\n"
        f"- Spent: {status.spent or 'nothing recorded yet'}\n"
    )


def unknown_verb_reply() -> str:
    """How to write a command. Never names what was written: a comment's text is never echoed."""
    verbs = ", ".join(f"`the-loop {verb.value}`" for verb in Verb)
    return (
        f"{AGENT_MARKER}\n"
        "> 🤖 **the-loop**: that comment reads as a command to the-loop, but not one it knows as written; "
        "nothing was done, and it was not passed to the agent.\n\n"
        f"Write a command alone on the first line of a comment, nothing after it: {verbs} "
        "(`/the-loop pause` and `@the-loop pause` work too). A comment for the agent that starts with "
        "the name goes on after it in words: `@the-loop please look at the failing test`.\n"
    )


def when(moment: datetime | None) -> str:
    return f"{moment:%Y-%m-%d %H:%M:%S} UTC" if moment else "unknown time"
