"""How `events` reads its arguments and shows records: a table for people, JSON lines for scripts."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from domain.events import for_commands

Record = Mapping[str, Any]
_OVERLAP = 100  # more lines than can be appended between starting the tail and reading the log

_RELATIVE = re.compile(r"^(?P<count>[0-9]+)(?P<unit>[smhd])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
_HEADER = ("ts", "source", "event", "level", "work_item")
COLUMNS = ("TIME", "LEVEL", "EVENT", "WORK ITEM", "DETAILS")
_CELL_MAX = 80
_WIDTHS = (19, 7, 25, 26)  # time, level, the longest event name, a typical work item


def parse_since(text: str, *, now: datetime) -> datetime:
    """`15m`, `2h`, `1d`, `30s` before `now`, or an ISO time (UTC when it names no zone)."""
    match = _RELATIVE.match(text.strip())
    if match:
        return now - timedelta(**{_UNITS[match["unit"]]: int(match["count"])})
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"expected 15m, 2h, 1d or an ISO time (got {text!r})") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def show_events(
    shown: Sequence[Record], tail: Iterator[Record], *, path: Path, json_lines: bool, follow: bool, skipped: int = 0
) -> int:
    """What `events` prints once read: the one place its output is made (`app.cli.fast_reads` too).
    `skipped`: the broken lines the read passed over, said on stderr."""
    show = as_json if json_lines else (lambda record: line(as_row(record)))
    if not json_lines and (shown or follow):
        print(line(COLUMNS))
    for old in shown:
        print(show(old))
    if not shown and not follow:
        print(f"no matching events in {path}", file=sys.stderr)
    if skipped:
        print(f"{skipped} broken line(s) in {path} skipped (a write cut short by a crash)", file=sys.stderr)
    try:
        for new in _unseen(tail, shown):
            print(show(new), flush=True)
    except KeyboardInterrupt:
        return 0  # the way out of --follow
    return 0


def _unseen(tail: Iterator[Record], shown: Sequence[Record]) -> Iterator[Record]:
    """The tail, minus what the first read already showed: both see lines appended in between,
    and those come first in the tail."""
    recent = [dict(record) for record in shown[-_OVERLAP:]]
    for record in tail:
        if recent and dict(record) in recent:
            recent.remove(dict(record))
            continue
        recent = []
        yield record


def as_json(record: Mapping[str, Any]) -> str:
    # ASCII escapes keep any control character in a field from reaching the terminal raw
    return json.dumps(for_commands(record), ensure_ascii=True, separators=(",", ":"))


def as_row(record: Mapping[str, Any]) -> tuple[str, ...]:
    details = {k: v for k, v in for_commands(record).items() if k not in _HEADER}
    if record.get("source", "poller") != "poller":
        details = {"source": record["source"], **details}
    detail = " ".join(f"{key}={_plain(value)}" for key, value in details.items())
    cells = (
        _time(record.get("ts")),
        record.get("level", ""),
        record.get("event", ""),
        record.get("work_item", ""),
        detail,
    )
    return tuple(_visible(str(cell)) for cell in cells)


def line(cells: tuple[str, ...]) -> str:
    """One aligned table line; fixed widths, so a followed log lines up with what came before."""
    padded = [cell.ljust(width) for cell, width in zip(cells, _WIDTHS, strict=False)]
    return "  ".join([*padded, *cells[len(_WIDTHS) :]]).rstrip()


def _time(ts: Any) -> str:
    try:
        return datetime.fromisoformat(str(ts)).strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return str(ts or "")


def _plain(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = json.dumps(text, ensure_ascii=False) if (not text or " " in text) else text
    return text if len(text) <= _CELL_MAX else text[: _CELL_MAX - 1] + "…"


def _visible(text: str) -> str:
    """Control characters (ESC above all) shown as escapes: a field must not drive the terminal."""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}" for c in text)
