"""Issue 19 item 9: `status`, `sessions list` and `events` answered from the settings snapshot (the
lean path, app.cli.fast_reads) print byte for byte what the full path prints, through the real
entry point; whatever the lean path does not know takes the full path."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from adapters.eventlog.writer import JsonlEventLog
from adapters.sqlite.store import FILE_NAME, SqliteStateStore
from app.cli import fast_reads
from app.config import snapshot
from app.config.loader import load
from app.usecases.daemon import heartbeat_key
from domain.events import Event
from tests.e2e.cli import run_cli

CONFIG = "state: {root: ./state}\npolling:\n  sources: [{provider: github, repos: [acme/widgets], label: loop}]\n"
FORMS = [
    ("status",),
    ("status", "--json"),
    ("sessions", "list"),
    ("sessions", "list", "--json"),
    ("events",),
    ("events", "--json", "--limit", "3"),
    ("events", "--level", "warning"),
    ("events", "--type", "poll.*", "--limit", "0"),
    ("--config", ".the-loop/cli-config.yaml", "status"),
]


def _folder(root: Path, *, store: bool) -> Path:
    (root / ".the-loop").mkdir(parents=True)
    (root / ".the-loop" / "cli-config.yaml").write_text(CONFIG, encoding="utf-8")
    if store:
        (root / "state").mkdir(mode=0o700)
        SqliteStateStore(root / "state" / FILE_NAME).save_meta(
            "heartbeat",
            json.dumps(
                {
                    "pid": 4242,
                    "started": "2026-01-01T00:00:00+00:00",
                    "interval_seconds": 60,
                    "last_cycle_started": "2026-01-01T00:00:00+00:00",
                    "last_cycle_finished": "2026-01-01T00:00:03+00:00",
                    "summary": {"items": 2},
                }
            ),
        )
        clock = iter(datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=n) for n in range(100))
        log = JsonlEventLog(root / "state" / "logs" / "events.jsonl", clock=lambda: next(clock))
        for n in range(12):
            log.emit(Event.POLL_CYCLE, items=n, work_item="github:acme/widgets#1")
        log.emit(Event.SESSION_SPAWN_FAILED, work_item="github:acme/widgets#2", error="no \x1b[31m harness")
    return root


def _run(folder: Path, argv: tuple[str, ...], cache: Path) -> tuple[int, str, str]:
    """Exit status, stdout and stderr; only the one field that is the time of the run is masked."""
    done: subprocess.CompletedProcess[str] = run_cli(folder, *argv, env={"XDG_CACHE_HOME": str(cache)})
    return done.returncode, re.sub(r'"seconds_ago": [0-9.]+', '"seconds_ago": N', done.stdout), done.stderr


@pytest.mark.parametrize("store", [True, False], ids=["a state", "no state yet"])
@pytest.mark.parametrize("argv", FORMS, ids=" ".join)
def test_issue19_item9_the_lean_start_prints_byte_for_byte_what_the_full_load_prints(
    tmp_path: Path, argv: tuple[str, ...], store: bool
) -> None:
    folder = _folder(tmp_path / "work", store=store)
    cache = tmp_path / "cache"
    full = _run(folder, argv, cache)  # no snapshot yet: the full load, which saves one
    assert list((cache / "the-loop" / "snapshots").iterdir())
    lean = _run(folder, argv, cache)
    assert lean == full
    assert full[0] in (0, 3)


def test_issue19_item9_the_lean_path_declines_what_it_does_not_answer() -> None:
    for argv in (
        ["status", "--help"],
        ["status", "--js"],
        ["status", "--json", "--json"],
        ["events", "--since", "15m"],
        ["events", "--follow"],
        ["events", "--work-item", "#1"],
        ["events", "--limit", "x"],
        ["events", "--limit"],
        ["sessions", "list", "--status", "active"],
        ["sessions", "attach", "--work-item", "#1"],
        ["--config=c.yaml", "status"],
        ["poll", "--once"],
        [],
    ):
        assert fast_reads.plain(argv) is None, argv
    assert fast_reads.plain(["--config", "c.yaml", "events", "--json", "--limit", "0"]) == (
        "c.yaml",
        "events",
        {"--json": True, "--limit": "0"},
    )


def test_issue19_item9_the_lean_path_knows_the_store_s_file_and_heartbeat_names() -> None:
    assert fast_reads.STATE_FILE == FILE_NAME
    assert heartbeat_key("any-host", shared=False) == fast_reads.HEARTBEAT


@pytest.mark.parametrize("table", ["sessions", "ledgers"])
def test_issue19_item9_sessions_list_of_a_store_holding_any_work_item_takes_the_full_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], table: str
) -> None:
    monkeypatch.chdir(_folder(tmp_path / "work", store=True))
    env = {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path)}
    snapshot.write(load(None), env)
    assert fast_reads.run_fast(["sessions", "list"], env) == 0  # no work item: answered here
    assert "no sessions recorded in" in capsys.readouterr().err
    with sqlite3.connect(Path("state") / FILE_NAME) as db:
        db.execute(f"INSERT INTO {table} (item, data) VALUES ('github:acme/widgets#1', '{{}}')")
    assert fast_reads.run_fast(["sessions", "list"], env) is None
    assert capsys.readouterr() == ("", "")  # declined before printing a byte
