"""The JSONL event log and its reader, on real files and real processes."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from adapters.eventlog.reader import EventFilter, follow_events, read_events
from adapters.eventlog.writer import JsonlEventLog
from domain.events import Event, Level
from domain.model import SessionState
from domain.refs import WorkItemRef
from tests.fakes.clock import FakeClock

ROOT = Path(__file__).resolve().parents[2]
ITEM = WorkItemRef.parse("github:acme/widgets#7")
OTHER = WorkItemRef.parse("github:acme/widgets#8")


def event_log(tmp_path: Path, clock: FakeClock | None = None) -> tuple[JsonlEventLog, FakeClock]:
    clock = clock or FakeClock(datetime(2025, 3, 1, 12, 0, tzinfo=UTC))
    return JsonlEventLog(tmp_path / "logs" / "events.jsonl", clock=clock.now), clock


def lines(log: JsonlEventLog) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.path.read_text().splitlines()]


def test_a_record_leads_with_ts_source_event_level_then_its_fields(tmp_path: Path) -> None:
    log, _ = event_log(tmp_path)
    log.emit(Event.DISPATCH_FAILED, level=Level.WARNING, source="dispatcher", work_item=str(ITEM), will_retry=True)
    assert list(lines(log)[0].items()) == [
        ("ts", "2025-03-01T12:00:00.000000Z"),
        ("source", "dispatcher"),
        ("event", "dispatch.failed"),
        ("level", "warning"),
        ("work_item", "github:acme/widgets#7"),
        ("will_retry", True),
    ]


def test_the_timestamp_is_the_clocks_time_in_utc(tmp_path: Path) -> None:
    in_paris = datetime(2025, 3, 1, 14, 30, 0, 250000, tzinfo=ZoneInfo("Europe/Paris"))
    log, _ = event_log(tmp_path, FakeClock(in_paris))
    log.emit(Event.POLLER_STARTED)
    assert lines(log)[0]["ts"] == "2025-03-01T13:30:00.250000Z"


def test_events_are_written_in_the_order_they_were_emitted(tmp_path: Path) -> None:
    log, clock = event_log(tmp_path)
    for event in (Event.POLLER_STARTED, Event.POLL_CYCLE, Event.POLLER_STOPPED):
        log.emit(event)
        clock.advance(1)
    assert [r["event"] for r in lines(log)] == ["poller.started", "poll.cycle", "poller.stopped"]


def test_values_json_cannot_hold_are_written_in_their_display_form(tmp_path: Path) -> None:
    log, _ = event_log(tmp_path)
    at = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    log.emit(Event.POLL_BACKOFF, state=SessionState.UNKNOWN, until=at, item=ITEM, path=Path("a/b"), ids={"b", "a"})
    assert {k: v for k, v in lines(log)[0].items() if k not in {"ts", "source", "event", "level"}} == {
        "state": "unknown",
        "until": "2025-01-02T03:04:05.000000Z",
        "item": "github:acme/widgets#7",
        "path": "a/b",
        "ids": ["a", "b"],
    }


def test_a_field_named_ts_cannot_overwrite_the_timestamp(tmp_path: Path) -> None:
    log, _ = event_log(tmp_path)
    log.emit(Event.POLL_CYCLE, ts="forged")
    record = lines(log)[0]
    assert (record["ts"], record["field_ts"]) == ("2025-03-01T12:00:00.000000Z", "forged")


def test_control_characters_in_a_field_reach_the_file_only_escaped(tmp_path: Path) -> None:
    log, _ = event_log(tmp_path)
    log.emit(Event.POLL_SOURCE_FAILED, cause="\x1b[2J\x07\r\u009b\u2028 évil")
    raw = log.path.read_bytes()
    assert (raw.isascii(), raw.count(b"\n"), lines(log)[0]["cause"]) == (True, 1, "\x1b[2J\x07\r\u009b\u2028 évil")


WRITER = """
import sys
from datetime import UTC, datetime
from pathlib import Path
from adapters.eventlog.writer import JsonlEventLog
from domain.events import Event
log = JsonlEventLog(Path(sys.argv[1]), clock=lambda: datetime.now(UTC))
for n in range(int(sys.argv[2])):
    log.emit(Event.POLL_CYCLE, writer=sys.argv[3], n=n, padding=sys.argv[3] * 20000)
"""


def test_two_processes_writing_at_once_leave_only_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "events.jsonl"
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), "150", name], cwd=ROOT) for name in "ab"]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    records = [json.loads(line) for line in path.read_bytes().splitlines()]
    assert sorted((r["writer"], r["n"]) for r in records) == sorted((w, n) for w in "ab" for n in range(150))


def written(tmp_path: Path) -> Path:
    log, clock = event_log(tmp_path)
    log.emit(Event.POLLER_STARTED)
    clock.advance(60)
    log.emit(Event.SESSION_SPAWNED, work_item=str(ITEM))
    clock.advance(60)
    log.emit(Event.DISPATCH_FAILED, level=Level.WARNING, work_item=str(OTHER))
    clock.advance(60)
    log.emit(Event.SESSION_SPAWN_FAILED, level=Level.ERROR, work_item=str(ITEM))
    clock.advance(60)
    log.emit(Event.SESSION_CLOSED, work_item=str(ITEM))
    return log.path


def names(records: list[dict[str, object]]) -> list[object]:
    return [r["event"] for r in records]


def test_reading_with_a_type_glob_keeps_only_matching_events(tmp_path: Path) -> None:
    assert names(read_events(written(tmp_path), types="session.*")) == [
        "session.spawned",
        "session.spawn_failed",
        "session.closed",
    ]


def test_reading_for_a_work_item_keeps_only_its_events(tmp_path: Path) -> None:
    assert names(read_events(written(tmp_path), work_item=OTHER)) == ["dispatch.failed"]


def test_reading_with_a_level_keeps_that_level_and_above(tmp_path: Path) -> None:
    assert names(read_events(written(tmp_path), level=Level.WARNING)) == ["dispatch.failed", "session.spawn_failed"]


def test_reading_since_a_time_keeps_events_at_or_after_it(tmp_path: Path) -> None:
    since = datetime(2025, 3, 1, 12, 3, tzinfo=UTC)
    assert names(read_events(written(tmp_path), since=since)) == ["session.spawn_failed", "session.closed"]


def test_reading_with_a_limit_keeps_the_newest_matches(tmp_path: Path) -> None:
    assert names(read_events(written(tmp_path), work_item=ITEM, limit=2)) == ["session.spawn_failed", "session.closed"]


def test_a_cut_last_line_is_skipped_and_the_rest_read(tmp_path: Path) -> None:
    path = written(tmp_path)
    with path.open("ab") as log:
        log.write(b'{"ts": "2025-03-01T12:09:00.000000Z", "event": "poll.cy')
    assert len(read_events(path)) == 5


def test_reading_a_log_that_does_not_exist_yet_finds_nothing(tmp_path: Path) -> None:
    assert read_events(tmp_path / "nope.jsonl") == []


def test_following_yields_only_events_written_after_it_started(tmp_path: Path) -> None:
    log, _ = event_log(tmp_path)
    log.emit(Event.POLLER_STARTED)
    later = iter([lambda: log.emit(Event.POLL_CYCLE), lambda: log.emit(Event.POLLER_STOPPED)])
    tail = follow_events(log.path, sleep=lambda _: next(later)())
    assert [next(tail)["event"], next(tail)["event"]] == ["poll.cycle", "poller.stopped"]


def test_following_starts_at_the_end_the_log_had_when_it_was_called_not_at_the_first_read(tmp_path: Path) -> None:
    log, _ = event_log(tmp_path)
    log.emit(Event.POLLER_STARTED)
    tail = follow_events(log.path, sleep=lambda _: None)
    log.emit(Event.POLL_CYCLE)  # `events --follow` prints the history meanwhile
    assert next(tail)["event"] == "poll.cycle"


def test_following_holds_a_half_written_line_until_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"")
    halves = iter([b'{"event": "poll.cy', b'cle", "level": "info"}\n'])

    def append_next_half(_: float) -> None:
        with path.open("ab") as log:
            log.write(next(halves))

    tail = follow_events(path, EventFilter(types="poll.*"), sleep=append_next_half)
    assert next(tail) == {"event": "poll.cycle", "level": "info"}


def test_an_unwritable_log_never_raises_into_the_daemon(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the log's folder should be")
    log = JsonlEventLog(blocked / "events.jsonl", clock=lambda: datetime(2026, 1, 1, tzinfo=UTC))

    log.emit(Event.POLL_CYCLE, items=1)

    assert "poll.cycle" in caplog.text and "not written" in caplog.text


def test_a_tail_with_history_reads_the_whole_lines_of_the_logs_end_then_what_is_appended(tmp_path: Path) -> None:
    from adapters.eventlog.reader import Tail

    log, _ = event_log(tmp_path)
    for items in range(3):
        log.emit(Event.POLL_CYCLE, items=items)
    tail = Tail(log.path, history=len(log.path.read_bytes().splitlines()[-1]) + 10)  # 10 bytes into a line
    first = tail.read()
    log.emit(Event.POLL_CYCLE, items=3)
    with log.path.open("ab") as file:
        file.write(b'{"event": "cut')  # a line still being written waits for its newline
    second = tail.read()

    assert [r["items"] for r in first] == [2] and [r["items"] for r in second] == [3]
    assert tail.skipped.lines == 0  # the cut first line is not broken, only started before the history
    assert Tail(tmp_path / "none.jsonl", history=100).read() == []


def test_each_line_written_cues_a_follower_in_the_same_process(tmp_path: Path) -> None:
    log, _ = event_log(tmp_path)
    cues: list[int] = []
    log.written = lambda: cues.append(log.path.stat().st_size)

    log.emit(Event.POLL_CYCLE, items=1)
    log.emit(Event.POLL_CYCLE, items=2)

    assert len(cues) == 2 and cues[0] < cues[1] == log.path.stat().st_size  # after the line is there
