"""How the fleet page says a time and an event's fields: the clock time in UTC with how long ago
from a given now, the exact time on hover, and each field's name in words."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from app.web.views import events_list
from app.web.words import field_name, labelled, moment, time_tag

NOW = datetime(2026, 12, 6, 12, 5, 5, tzinfo=UTC)


@pytest.mark.parametrize(
    ("ago", "shown"),
    [
        (timedelta(minutes=2), "12:03:05 (2 min ago)"),
        (timedelta(seconds=45), "12:04:20 (45 s ago)"),
        (timedelta(hours=3, minutes=10), "08:55:05 (3 h ago)"),
        (timedelta(0), "12:05:05 (just now)"),
        (timedelta(seconds=-5), "12:05:10 (in 5 s)"),  # a clock ahead of ours
    ],
)
def test_a_time_of_today_reads_as_its_clock_time_and_how_long_ago(ago: timedelta, shown: str) -> None:
    assert moment(NOW - ago, now=NOW).shown == shown


def test_a_time_of_another_day_names_its_date() -> None:
    assert moment(NOW - timedelta(days=2), now=NOW).shown == "2026-12-04 12:05:05 (2 d ago)"


def test_a_time_is_said_in_utc_whatever_zone_it_was_written_in() -> None:
    then = datetime(2026, 12, 6, 13, 3, 5, tzinfo=timezone(timedelta(hours=1)))

    said = moment(then, now=NOW)

    assert said.shown == "12:03:05 (2 min ago)"
    assert said.exact == "2026-12-06 12:03:05 UTC"


def test_the_exact_time_is_in_the_title_for_the_hover() -> None:
    tag = time_tag(NOW - timedelta(minutes=2), now=NOW)

    assert tag == (
        '<time datetime="2026-12-06T12:03:05+00:00" title="2026-12-06 12:03:05 UTC">12:03:05 (2 min ago)</time>'
    )


def test_a_record_time_that_is_no_time_is_shown_as_written() -> None:
    assert time_tag("not a <time>", now=NOW) == "not a &lt;time&gt;"
    assert time_tag(None, now=NOW) == "–"


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("comment_id", "comment"),
        ("work_item", "item"),
        ("confirmed_by", "confirmed by"),
        ("old_session_id", "old session id"),
        ("wait_seconds", "wait (seconds)"),
        ("duration_ms", "duration (ms)"),
        ("cwd", "folder"),
        ("reason", "reason"),
    ],
)
def test_a_fields_name_reads_in_words(key: str, words: str) -> None:
    assert field_name(key) == words


def test_an_events_own_fields_are_labelled_and_the_shown_ones_left_out() -> None:
    record = {"ts": "x", "event": "dispatch.confirmed", "work_item": "w", "level": "info", "comment_id": "7",
              "confirmed_by": "receipt", "attempt": 1}  # fmt: skip

    assert labelled(record) == [("comment", "7"), ("confirmed by", "receipt"), ("attempt", "1")]


def test_the_events_list_shows_each_field_as_a_label_and_its_value() -> None:
    record = {"ts": "2026-12-06T12:03:05+00:00", "event": "dispatch.confirmed", "comment_id": "7",
              "confirmed_by": "<b>receipt</b>"}  # fmt: skip

    html = events_list([(1, record)], now=NOW)

    assert "<dt>comment</dt><dd>7</dd>" in html
    assert "<dt>confirmed by</dt><dd>&lt;b&gt;receipt&lt;/b&gt;</dd>" in html
    assert "comment_id=" not in html and 'title="2026-12-06 12:03:05 UTC"' in html
