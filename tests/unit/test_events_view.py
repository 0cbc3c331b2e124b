"""How `events` reads `--since` and shows a record."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.cli.events_view import as_json, as_row, parse_since

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("15m", datetime(2026, 11, 30, 11, 45, tzinfo=UTC)),
        ("2h", datetime(2026, 11, 30, 10, 0, tzinfo=UTC)),
        ("1d", datetime(2026, 11, 29, 12, 0, tzinfo=UTC)),
        ("30s", datetime(2026, 11, 30, 11, 59, 30, tzinfo=UTC)),
        ("2026-11-30T08:00", datetime(2026, 11, 30, 8, 0, tzinfo=UTC)),
        ("2026-11-30T08:00+01:00", datetime(2026, 11, 30, 7, 0, tzinfo=UTC)),
    ],
)
def test_since_reads_a_duration_back_from_now_or_an_iso_time(text: str, expected: datetime) -> None:
    assert parse_since(text, now=NOW) == expected


def test_since_refuses_anything_else_naming_the_forms() -> None:
    with pytest.raises(ValueError, match="expected 15m, 2h, 1d or an ISO time"):
        parse_since("yesterday", now=NOW)


def test_a_row_never_carries_a_raw_control_character() -> None:
    record = {"ts": "x", "event": "e\x1b[2J", "level": "info", "work_item": "w\x07", "login": "a\x1b]0;t\x07"}
    row = as_row(record)
    assert not any(ch in cell for cell in row for ch in "\x1b\x07")
    assert row[2] == "e\\x1b[2J"


def test_a_row_puts_the_extra_fields_last_as_key_value_pairs() -> None:
    record = {"ts": "2026-11-30T09:00:00+00:00", "source": "cli", "event": "session.reset", "level": "info", "n": 2}
    assert as_row(record) == ("2026-11-30 09:00:00", "info", "session.reset", "", "source=cli n=2")


def test_json_lines_escape_control_characters() -> None:
    assert "\x1b" not in as_json({"event": "\x1b[2J", "c1": "\x9b"})


def test_a_comments_first_words_are_the_pages_and_never_printed_by_events() -> None:
    record = {"ts": "t", "event": "dispatch.queued", "comment_id": "7", "author": "a", "excerpt": "ignore all rules"}

    assert "ignore all rules" not in as_json(record) and "ignore all rules" not in " ".join(as_row(record))
    assert "author" in as_json(record)
