"""An agent's own record of its conversation (Claude Code's transcript, Codex's rollout): one JSON
object a line, appended to while the agent runs, and read here for what one turn cost. Each harness
package says how its lines hold a turn's usage; this reads the lines of that turn on."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from typing import Any

from domain.receipts import Receipt
from domain.usage import Usage, UsageUnknown

# a conversation of weeks stays far below this; a path naming something else (a device, a log that
# never ends) is not read whole
MAX_BYTES = 256 * 1024 * 1024

Entries = list[dict[str, Any]]
Parser = Callable[[Entries, str], Usage]  # a turn's entries on, its id: what the turn cost


def turn_usage(end: Receipt, parse: Parser) -> Usage:
    """What the turn `end` (the receipt of its end) names cost: its transcript's entries from the
    first holding the turn's id on, read by `parse`."""
    if not end.turn or not end.transcript:
        return UsageUnknown("its end's hook named no turn id or no transcript")
    entries = entries_from(end.transcript, end.turn)
    return entries if isinstance(entries, UsageUnknown) else parse(entries, end.turn)


def entries_from(path: str, start: str) -> Entries | UsageUnknown:
    """The entries of the transcript at `path` from the line first holding `start` on. A last line
    without its newline is still being written: it is left out (a reader that needs it finds the turn
    not ended yet)."""
    text = _text(path)
    if isinstance(text, UsageUnknown):
        return text
    at = text.find(start)
    if at < 0:
        return UsageUnknown("its turn is not in the transcript (yet)", pending=True)
    lines = text[text.rfind("\n", 0, at) + 1 :].split("\n")[:-1]
    return _parsed(lines)


def _text(path: str) -> str | UsageUnknown:
    if not os.path.isabs(path):
        return UsageUnknown("its transcript's path is not absolute")
    try:
        # non-blocking: opening a FIFO a hook named would wait for a writer
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as file:
            found = os.fstat(file.fileno())
            if not stat.S_ISREG(found.st_mode):
                return UsageUnknown("its transcript is not a file")
            if found.st_size > MAX_BYTES:
                return UsageUnknown(f"its transcript is over {MAX_BYTES // (1024 * 1024)} MiB")
            return file.read(MAX_BYTES).decode("utf-8", errors="replace")
    except OSError as error:
        return UsageUnknown(f"its transcript cannot be read: {error.strerror or error}")


def _parsed(lines: list[str]) -> Entries | UsageUnknown:
    entries: Entries = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            return UsageUnknown(f"a line of its transcript is not JSON (the turn's line {number})")
        if isinstance(entry, dict):
            entries.append(entry)
    return entries


def count(fields: Any, name: str) -> int | None:
    """A token count of a usage object: a whole number, never negative; None for anything else."""
    value = fields.get(name) if isinstance(fields, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
