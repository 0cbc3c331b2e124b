"""`events` on a real log: filters, JSON lines, a table safe for a terminal, and `--follow`."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path

from tests.e2e.cli import clean_env, run_cli

RECORDS = [
    {"ts": "2026-11-30T09:00:00+00:00", "source": "poller", "event": "poller.started", "level": "info"},
    {
        "ts": "2026-11-30T09:00:01+00:00",
        "source": "poller",
        "event": "session.spawned",
        "level": "info",
        "work_item": "github:o/r#1",
        "target": "loop-github-o-r-1",
    },
    {
        "ts": "2026-11-30T09:00:02+00:00",
        "source": "poller",
        "event": "dispatch.failed",
        "level": "warning",
        "work_item": "github:o/r#2",
        "cause": "tmux did not answer \x1b[31m",
    },
    {
        "ts": "2026-11-30T09:00:03+00:00",
        "source": "poller",
        "event": "session.respawned",
        "level": "info",
        "work_item": "github:o/r#2",
    },
]


def logged(tmp_path: Path) -> Path:
    log = tmp_path / ".the-loop" / "logs" / "events.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    return log


def events(tmp_path: Path, *args: str) -> list[str]:
    result = run_cli(tmp_path, "events", "--json", *args)
    assert result.returncode == 0, result.stderr
    return [json.loads(line)["event"] for line in result.stdout.splitlines()]


def test_a_type_glob_keeps_only_matching_events(tmp_path: Path) -> None:
    logged(tmp_path)
    assert events(tmp_path, "--type", "session.*") == ["session.spawned", "session.respawned"]


def test_work_item_level_and_limit_combine(tmp_path: Path) -> None:
    logged(tmp_path)
    assert events(tmp_path, "--work-item", "github:o/r#2", "--level", "warning") == ["dispatch.failed"]
    assert events(tmp_path, "--limit", "2") == ["dispatch.failed", "session.respawned"]


def test_since_an_iso_time_drops_older_events(tmp_path: Path) -> None:
    logged(tmp_path)
    assert events(tmp_path, "--since", "2026-11-30T09:00:02") == ["dispatch.failed", "session.respawned"]


def test_the_table_shows_control_characters_as_escapes(tmp_path: Path) -> None:
    logged(tmp_path)
    result = run_cli(tmp_path, "events", "--level", "warning")
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["TIME", "LEVEL", "EVENT", "WORK", "ITEM", "DETAILS"]
    assert "dispatch.failed" in lines[1] and "github:o/r#2" in lines[1]
    assert "\x1b" not in result.stdout and "\\u001b[31m" in lines[1]


def test_follow_shows_an_event_written_after_it_started(tmp_path: Path) -> None:
    log = logged(tmp_path)
    follower = subprocess.Popen(
        [sys.executable, "-m", "app", "events", "--json", "--follow", "--limit", "1"],
        cwd=tmp_path,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in follower.stdout or ()], daemon=True).start()
    try:
        assert json.loads(lines.get(timeout=60))["event"] == "session.respawned"  # the history, then the tail
        with log.open("a", encoding="utf-8") as appending:
            appending.write(json.dumps({**RECORDS[0], "event": "poller.stopped"}) + "\n")
        assert json.loads(lines.get(timeout=60))["event"] == "poller.stopped"
    finally:
        follower.terminate()
        follower.wait(timeout=30)


def test_a_broken_line_is_skipped_and_said_on_stderr(tmp_path: Path) -> None:
    log = logged(tmp_path)
    whole = log.read_text(encoding="utf-8").splitlines(keepends=True)
    log.write_text(whole[0] + '{"ts": "2026-11-30T09:00:00.5", "event": "poll.cy\n' + "".join(whole[1:]))

    for args in [(), ("--work-item", "github:o/r#2")]:  # the quick read and the full command
        result = run_cli(tmp_path, "events", "--json", *args)
        assert result.returncode == 0 and len(result.stdout.splitlines()) == (4 if not args else 2)
        assert "1 broken line(s) in" in result.stderr and "events.jsonl skipped" in result.stderr
