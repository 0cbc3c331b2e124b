"""A line of the event log is whole or not there: a write cut short (the file size limit, a full
disk) is taken back (blanked in place), the next event starts on a line of its own, and readers skip a broken line
and count it. On real files; the size limit is set in a child process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from adapters.eventlog.reader import Skipped, read_events
from adapters.eventlog.writer import JsonlEventLog
from domain.events import Event
from tests.fakes.clock import FakeClock

ROOT = Path(__file__).resolve().parents[2]

# the limit makes write() stop short; with SIGXFSZ ignored it returns the bytes written (or EFBIG)
# instead of the signal killing the process
CUT_SHORT = """
import resource, signal, sys
from datetime import UTC, datetime
from pathlib import Path
from adapters.eventlog.writer import JsonlEventLog
from domain.events import Event
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
log = JsonlEventLog(Path(sys.argv[1]), clock=lambda: datetime.now(UTC))
log.emit(Event.POLLER_STARTED)
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (log.path.stat().st_size + 40, hard))
log.emit(Event.POLL_CYCLE, n=1, padding="x" * 200)
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
log.emit(Event.POLL_CYCLE, n=2)
"""


def test_a_write_cut_short_by_the_file_size_limit_is_taken_back_and_the_next_event_is_read(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "events.jsonl"
    argv = [sys.executable, "-c", CUT_SHORT, str(path)]
    child = subprocess.run(argv, check=False, cwd=ROOT, capture_output=True, text=True)

    assert child.returncode == 0, child.stderr
    assert "short write" in child.stderr  # the cut event is reported as not written
    assert [(r["event"], r.get("n")) for r in read_events(path)] == [("poller.started", None), ("poll.cycle", 2)]
    lines = path.read_bytes().splitlines()
    assert [json.loads(line)["event"] if line.strip() else "" for line in lines] == ["poller.started", "", "poll.cycle"]
    assert len(lines[1]) == 39  # the 40 bytes written, blanked in place: the file never shrinks under a reader


def test_after_a_cut_last_line_the_next_event_starts_on_a_line_of_its_own(tmp_path: Path) -> None:
    log = JsonlEventLog(tmp_path / "events.jsonl", clock=FakeClock(datetime(2026, 3, 1, tzinfo=UTC)).now)
    log.emit(Event.POLLER_STARTED)
    with log.path.open("ab") as file:  # what a crash in the middle of a write leaves
        file.write(b'{"ts": "2026-03-01T00:00:00.000000Z", "event": "poll.cy')
    log.emit(Event.POLL_CYCLE, n=2)
    skipped = Skipped()

    assert [r["event"] for r in read_events(log.path, skipped=skipped)] == ["poller.started", "poll.cycle"]
    assert skipped.lines == 1


def test_a_broken_line_between_whole_ones_is_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"event": "a"}\n{"event": "b\n\n{"event": "c"}\n[1]\n{"event": "d"}\n{"event": "still bei')
    skipped = Skipped()

    assert [r["event"] for r in read_events(path, skipped=skipped)] == ["a", "c", "d"]
    assert skipped.lines == 2  # a cut line and a line that is no record; not the empty one, nor one still written


def test_cut_bytes_another_process_appended_after_are_blanked_in_place_and_its_line_kept(tmp_path: Path) -> None:
    from adapters.eventlog.rotation import _take_back

    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"event": "a"}\n')
    fd = os.open(path, os.O_RDWR | os.O_APPEND)
    try:
        os.write(fd, b'{"event": "cu')  # what a write cut short leaves
        with path.open("ab") as other:  # another process's line, started on a new line of its own
            other.write(b'\n{"event": "b"}\n')
        _take_back(path, fd, len(b'{"event": "cu'))
    finally:
        os.close(fd)
    skipped = Skipped()

    assert [r["event"] for r in read_events(path, skipped=skipped)] == ["a", "b"]
    assert (skipped.lines, path.read_bytes()) == (0, b'{"event": "a"}\n' + b" " * 12 + b'\n\n{"event": "b"}\n')


def _tail_that_read_cut_bytes_then_the_next_event(tmp_path: Path, next_line: bytes) -> tuple[list[str], int]:
    """A follower reads the log while a write is cut short at its end, the cut is taken back, then
    the next event is appended: the events that follower reads after the first, and its skipped lines."""
    from adapters.eventlog.reader import Tail
    from adapters.eventlog.rotation import Rotation, _take_back, append

    path = tmp_path / "events.jsonl"
    append(path, b'{"event": "a"}\n', Rotation())
    tail = Tail(path)
    fd = os.open(path, os.O_RDWR | os.O_APPEND)
    try:
        cut = b'{"event": "cut", "padding": "xxxxxxxxxxxxxxx'
        os.write(fd, cut)  # what a write cut short leaves, until it is taken back
        assert tail.read() == []  # the follower holds the cut bytes as a line still being written
        _take_back(path, fd, len(cut))
    finally:
        os.close(fd)
    append(path, next_line, Rotation())
    seen = tail.read() + tail.read()
    return [str(r["event"]) for r in seen], tail.skipped.lines


def test_a_follower_that_read_cut_bytes_reads_a_longer_next_event_once_and_nothing_spliced(tmp_path: Path) -> None:
    longer = b'{"event": "next", "note": "a line longer than the cut bytes it follows"}\n'

    assert _tail_that_read_cut_bytes_then_the_next_event(tmp_path, longer) == (["next"], 0)


def test_a_follower_that_read_cut_bytes_reads_a_shorter_next_event_once_and_not_the_log_again(tmp_path: Path) -> None:
    assert _tail_that_read_cut_bytes_then_the_next_event(tmp_path, b'{"event": "b"}\n') == (["b"], 0)
