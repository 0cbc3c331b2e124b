"""The recording harness says who it is and what else ran at its start: the kill campaign's oracle
for harnesses killed and for two harnesses of one item at once."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.tmux_support import SIM, records, wait_for


@contextmanager
def harness(record: Path, cwd: Path, *extra: str) -> Iterator[subprocess.Popen[bytes]]:
    """The simulator on a terminal of its own, listening."""
    master, slave = os.openpty()
    argv = [sys.executable, str(SIM), "--record", str(record), *extra]
    process = subprocess.Popen(argv, cwd=cwd, stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    try:
        wait_for(lambda: {"kind": "ready", "pid": process.pid} in records(record), what="listening")
        yield process
    finally:
        process.kill()
        process.wait(timeout=10)
        os.close(master)


def lines(record: Path, pid: int, kind: str) -> list[dict[str, object]]:
    return [r for r in records(record) if r["pid"] == pid and r["kind"] == kind]


def test_every_line_names_its_harness_and_the_start_says_where_it_runs(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    with harness(record, tmp_path) as first:
        (start,) = lines(record, first.pid, "start")
    assert start["cwd"] == str(tmp_path)
    assert start["server"] is None  # not in tmux
    assert {r["pid"] for r in records(record)} == {first.pid}


def test_a_harness_names_the_harnesses_of_its_folder_still_running_at_its_start(tmp_path: Path) -> None:
    record, elsewhere = tmp_path / "record.jsonl", tmp_path / "other"
    elsewhere.mkdir()
    with harness(record, tmp_path, "--peers") as first, harness(record, elsewhere, "--peers") as other:
        with harness(record, tmp_path, "--peers") as second:
            assert lines(record, second.pid, "peers") == [{"kind": "peers", "pid": second.pid, "pids": [first.pid]}]
        assert lines(record, other.pid, "peers")[0]["pids"] == []
    with harness(record, tmp_path, "--peers") as third:  # the others are gone
        assert lines(record, third.pid, "peers")[0]["pids"] == []


def test_a_harness_remembers_its_conversation_so_a_resume_finds_it(tmp_path: Path) -> None:
    record, known = tmp_path / "record.jsonl", tmp_path / "known"
    with harness(record, tmp_path, "--known-ids", str(known), "--remember", "--session-id", "conv-1"):
        pass
    with harness(record, tmp_path, "--known-ids", str(known), "--resume", "conv-1") as resumed:
        assert lines(record, resumed.pid, "exit") == []
    assert known.read_text(encoding="utf-8").split() == ["conv-1"]


def test_a_sigterm_or_sighup_is_recorded_and_ends_it(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    with harness(record, tmp_path) as running:
        running.terminate()
        assert running.wait(timeout=10) == 128 + 15
        assert lines(record, running.pid, "signal") == [{"kind": "signal", "pid": running.pid, "signum": 15}]
