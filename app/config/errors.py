"""One line for a refused configuration: where (file or variable), which key, what is wrong."""

from __future__ import annotations

import difflib
import itertools
import os
import re
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from app.config.env import env_name, keys_at
from app.config.settings import Settings

_QUOTED = re.compile(r"'([^']*)'")
_SUBKEY = re.compile(r"^(?P<key>[A-Za-z0-9_.-]+): (?P<rest>.+)$", re.DOTALL)
_PLAIN = {
    "missing": "required",
    "string_type": "must be text",
    "tuple_type": "must be a list",
    "list_type": "must be a list",
    "dict_type": "must be a mapping of keys",
    "model_type": "must be a mapping of keys",
    "model_attributes_type": "must be a mapping of keys",
    "too_short": "must not be empty",
}
_PREFIXED = {"int_": "must be a whole number", "float_": "must be a number", "bool_": "must be true or false"}
# keys whose values are never echoed (a DSN may hold a password, a harness's env a key)
_SECRETS = {"secret", "webhooksecret", "dsn", "env"}
_BOUNDS = {"greater_than_equal": "at least {ge}", "less_than_equal": "at most {le}", "greater_than": "more than {gt}"}


def describe(error: ValidationError, *, origin: str) -> str:
    """`<file or variable>: <key path>: <what is wrong> (got …)`, one line for each problem (every
    problem at once, so one edit fixes them all)."""
    return "\n".join(_line(problem, origin) for problem in _root_causes(error.errors(include_url=False)))


def _line(problem: ErrorDetails, origin: str) -> str:
    path, text = _path_and_text(problem)
    shown = ".".join(path).replace(".[", "[") or "(top level)"
    return f"{_where(path, origin)}: {shown}: {text}"


def _root_causes(errors: list[ErrorDetails]) -> list[ErrorDetails]:
    """Drop a container's complaint caused by its items (a list left empty by a bad entry)."""
    locs = [e["loc"] for e in errors]
    return [e for e in errors if not any(len(o) > len(e["loc"]) and o[: len(e["loc"])] == e["loc"] for o in locs)]


def _path_and_text(error: ErrorDetails) -> tuple[list[str], str]:
    # a mapping's key that failed its own check is named by the key itself, without pydantic's `[key]`
    path = [f"[{part}]" if isinstance(part, int) else str(part) for part in error["loc"] if part != "[key]"]
    text = _explain(error)
    match = _SUBKEY.match(text) if error["type"] == "value_error" else None
    if match:  # a check on a whole block names the key inside it: fold that into the path
        return [*path, *match["key"].split(".")], match["rest"]
    return path, text


def _explain(error: ErrorDetails) -> str:
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind == "extra_forbidden":
        return "unknown key" + _suggestion(error["loc"])
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    if kind in {"enum", "literal_error"}:
        return "must be one of " + ", ".join(_QUOTED.findall(str(ctx.get("expected", "")))) + _got(error)
    if kind in _BOUNDS:
        bounds = {name: int(v) if isinstance(v, float) and v.is_integer() else v for name, v in ctx.items()}
        return "must be " + _BOUNDS[kind].format(**bounds) + _got(error)
    prefix = next((p for p in _PREFIXED if kind.startswith(p)), None)
    text = _PLAIN.get(kind) or (_PREFIXED[prefix] if prefix else error["msg"])
    return text + ("" if kind == "missing" else _got(error))


def _got(error: ErrorDetails) -> str:
    if any(str(part).lower() in _SECRETS for part in error["loc"]):
        return ""  # never echo a secret
    shown = repr(error["input"])
    return f" (got {shown if len(shown) <= 60 else shown[:57] + '...'})"


def _suggestion(loc: tuple[Any, ...]) -> str:
    close = difflib.get_close_matches(str(loc[-1]), keys_at(Settings, loc[:-1]), n=1)
    return f" (did you mean {close[0]}?)" if close else ""


def _where(path: list[str], origin: str) -> str:
    """The variable that set the key, when the environment did; else the file."""
    # a list is set whole (JSON) by one variable: look no deeper than the first index
    keys = list(itertools.takewhile(lambda part: not part.startswith("["), path))
    environ = {name.upper() for name in os.environ}
    for end in range(len(keys), 0, -1):
        name = env_name(tuple(keys[:end]))
        if name in environ:
            return f"environment {name}"
    return origin
