"""The page's feed reads the event log as `events --follow` does: across rotations, under a writer
in another process rotating the log again and again, it sees every event once and in order."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from adapters.eventlog.reader import Tail
from adapters.eventlog.rotation import Rotation, append, rotate
from app.web.feed import Feed

ROOT = Path(__file__).resolve().parents[2]
EVENTS = 1500
WRITER = """
import sys
from datetime import UTC, datetime
from pathlib import Path
from adapters.eventlog.rotation import Rotation
from adapters.eventlog.writer import JsonlEventLog
from domain.events import Event
log = JsonlEventLog(Path(sys.argv[1]), clock=lambda: datetime.now(UTC), rotation=Rotation(max_bytes=3000, keep=1000))
for n in range(int(sys.argv[2])):
    log.emit(Event.POLL_CYCLE, n=n, padding="x" * (n % 200))
"""


def test_the_pages_feed_sees_every_event_once_in_order_while_the_log_rotates_under_it(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "events.jsonl"
    feed = Feed(path, Tail)
    feed.catch_up()
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(EVENTS)], cwd=ROOT)
    while writer.poll() is None:  # the feed reads on while the writer writes and rotates
        feed.catch_up()
    assert writer.wait() == 0
    feed.catch_up()

    assert len(list(path.parent.glob("events.jsonl.*[0-9]"))) > 20  # it did rotate, many times
    assert [record["n"] for _, record in feed.recent()] == list(range(EVENTS))


def test_a_follower_that_found_no_live_file_after_a_rotation_still_reads_a_file_rotated_before_it_looked_again(
    tmp_path: Path,
) -> None:
    path = tmp_path / "events.jsonl"
    rotation = Rotation(max_bytes=1, keep=10)  # every line rotates the one before away
    tail = Tail(path)
    append(path, b'{"n": 0}\n', rotation)
    assert [record["n"] for record in tail.read()] == [0]
    append(path, b'{"n": 1}\n', rotation)
    rotate(path, rotation, adding=1)  # rotated, and no new live file yet
    assert [record["n"] for record in tail.read()] == [1]

    append(path, b'{"n": 2}\n', rotation)  # a new live file, rotated away before the follower looks again
    append(path, b'{"n": 3}\n', rotation)

    assert [record["n"] for record in tail.read()] == [2, 3]


def test_a_follower_started_before_the_log_existed_reads_the_files_rotated_before_its_first_look(
    tmp_path: Path,
) -> None:
    path = tmp_path / "events.jsonl"
    rotation = Rotation(max_bytes=1, keep=10)  # every line rotates the one before away
    tail = Tail(path)  # no log yet: whatever is written from now on is new to it
    for n in range(4):  # the log made and rotated before the follower first looks
        append(path, f'{{"n": {n}}}\n'.encode(), rotation)

    assert [record["n"] for record in tail.read()] == [0, 1, 2, 3]
