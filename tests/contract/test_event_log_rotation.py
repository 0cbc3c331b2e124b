"""The event log rotates by size, and its readers read across the rotated files;
several writing processes at once lose and split no line across rotations."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

from adapters.eventlog.reader import follow_events, read_events
from adapters.eventlog.rotation import Rotation
from adapters.eventlog.writer import JsonlEventLog
from domain.events import Event
from tests.fakes.clock import FakeClock

ROOT = Path(__file__).resolve().parents[2]


def log_at(tmp_path: Path, rotation: Rotation) -> JsonlEventLog:
    clock = FakeClock(datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    return JsonlEventLog(tmp_path / "logs" / "events.jsonl", clock=clock.now, rotation=rotation)


def test_the_log_is_rotated_by_size_and_only_keep_rotated_files_stay(tmp_path: Path) -> None:
    log = log_at(tmp_path, Rotation(max_bytes=1000, keep=2))
    for n in range(100):
        log.emit(Event.POLL_CYCLE, n=n)
    files = sorted(p.name for p in log.path.parent.iterdir() if not p.name.endswith(".lock"))
    assert files == ["events.jsonl", "events.jsonl.1", "events.jsonl.2"]
    assert all(p.stat().st_size <= 1000 for p in log.path.parent.glob("events.jsonl*"))


def test_events_reads_across_the_rotated_files_oldest_first(tmp_path: Path) -> None:
    log = log_at(tmp_path, Rotation(max_bytes=1000, keep=50))
    for n in range(100):
        log.emit(Event.POLL_CYCLE, n=n)
    assert log.path.with_name("events.jsonl.3").exists()
    assert [r["n"] for r in read_events(log.path)] == list(range(100))
    assert [r["n"] for r in read_events(log.path, limit=3)] == [97, 98, 99]


def test_following_goes_on_into_the_new_file_after_a_rotation(tmp_path: Path) -> None:
    log = log_at(tmp_path, Rotation(max_bytes=300, keep=5))
    log.emit(Event.POLLER_STARTED)
    later = iter([lambda n=n: log.emit(Event.POLL_CYCLE, n=n) for n in range(12)])
    tail = follow_events(log.path, sleep=lambda _: next(later)())
    seen = [next(tail)["n"] for _ in range(12)]
    assert log.path.with_name("events.jsonl.2").exists()  # it did rotate, more than once
    assert seen == list(range(12))


WRITER = """
import sys
from datetime import UTC, datetime
from pathlib import Path
from adapters.eventlog.rotation import Rotation
from adapters.eventlog.writer import JsonlEventLog
from domain.events import Event
log = JsonlEventLog(Path(sys.argv[1]), clock=lambda: datetime.now(UTC), rotation=Rotation(max_bytes=4000, keep=10000))
for n in range(int(sys.argv[2])):
    log.emit(Event.POLL_CYCLE, writer=sys.argv[3], n=n, padding=sys.argv[3] * (n % 300))
"""


def test_writers_in_separate_processes_racing_rotations_lose_and_split_no_line(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "events.jsonl"
    path.parent.mkdir()
    path.touch()
    followed: list[tuple[str, int]] = []
    total = 3 * 400

    def follow() -> None:
        for record in follow_events(path, poll_seconds=0.001):
            followed.append((record["writer"], record["n"]))
            if len(followed) >= total:
                return

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), "400", name], cwd=ROOT) for name in "abc"]
    assert [w.wait(timeout=300) for w in writers] == [0, 0, 0]
    follower.join(timeout=60)

    expected = sorted((w, n) for w in "abc" for n in range(400))
    files = list(path.parent.glob("events.jsonl*[0-9]"))
    raw = [line for p in [*files, path] for line in p.read_bytes().splitlines()]
    assert len(files) > 10  # many rotations happened while they wrote
    assert sorted((r["writer"], r["n"]) for r in map(json.loads, raw)) == expected  # whole lines, each once
    assert sorted((r["writer"], r["n"]) for r in read_events(path)) == expected
    assert sorted(followed) == expected


def test_a_follower_slower_than_two_rotations_still_reads_the_file_between(tmp_path: Path) -> None:
    # seen in a CI run under load: the follower woke after two rotations and skipped the middle file
    log = log_at(tmp_path, Rotation(max_bytes=300, keep=50))
    log.emit(Event.POLLER_STARTED)
    wrote = iter(range(40))

    def asleep(_: float) -> None:  # each time the follower waits, many lines (several rotations) go by
        for _ in range(10):
            log.emit(Event.POLL_CYCLE, n=next(wrote))

    tail = follow_events(log.path, sleep=asleep)
    seen = [next(tail)["n"] for _ in range(30)]

    assert seen == list(range(30))
