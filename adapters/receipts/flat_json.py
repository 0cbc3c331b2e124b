"""A JSON object's top level read without recursion: what a hook's receipt says when a tool's
input in it is nested past what Python's JSON parser takes (it raises RecursionError)."""

from __future__ import annotations

import json
from typing import Any

from domain.receipts import too_deep, unreadable_input

_SPACE = " \t\r\n"


def top_level(text: str) -> dict[str, Any] | None:
    """The members of the JSON object `text`, each value parsed when it can be, else (nested
    deeper than a tool's input is read) `unreadable_input` of its text; None when `text` is no
    JSON object."""
    members: dict[str, Any] = {}
    at = _skip(text, 0)
    if not text.startswith("{", at):
        return None
    at = _skip(text, at + 1)
    done = text.startswith("}", at)
    while not done:
        member = _member(text, at)
        if member is None:
            return None
        key, value, at = member
        members[key] = value
        done = text.startswith("}", at)
        if not done and not text.startswith(",", at):
            return None
        at = _skip(text, at + 1)
    return members


def _member(text: str, at: int) -> tuple[str, Any, int] | None:
    """The member `"key": value` at `at`: its key, its value, and where what follows it starts."""
    try:
        key, at = json.JSONDecoder().raw_decode(text, at)
    except ValueError:
        return None
    at = _skip(text, at)
    if not isinstance(key, str) or not text.startswith(":", at):
        return None
    start = _skip(text, at + 1)
    end = _value_end(text, start)
    if end is None:
        return None
    raw = text[start:end].strip()
    try:
        value = json.loads(raw)
    except RecursionError:
        value = unreadable_input(raw)
    except ValueError:
        return None
    return key, unreadable_input(raw) if too_deep(value) else value, _skip(text, end)


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _SPACE:
        at += 1
    return at


def _value_end(text: str, start: int) -> int | None:
    """Where the value starting at `start` ends: its closing bracket or quote, or (a number, a
    literal) the comma or brace after it."""
    depth, quoted, escaped = 0, False, False
    for at in range(start, len(text)):
        char = text[at]
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
                if depth == 0:
                    return at + 1
        elif char == '"':
            quoted = True
        elif char in "[{":
            depth += 1
        elif char in "]}":
            if depth == 0:
                return at
            depth -= 1
            if depth == 0:
                return at + 1
        elif char == "," and depth == 0:
            return at
    return None
