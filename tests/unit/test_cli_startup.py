"""The CLI starts fast because it imports only what the dispatched command needs.

What is imported is counted, never how long it took: these cannot flake on a busy machine. The
timing itself is `python -m bench.cli_start` (its quick form runs in tests/e2e/test_benches.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from adapters.harnesses import names as harness_packages
from tests.e2e.cli import clean_env

# each of these costs more than a bare interpreter start on its own (see bench/cli_start.py)
HEAVY = ("pydantic", "pydantic_settings", "dependency_injector", "sh", "yaml", "psycopg", "asyncio")
# the cheap adapters the lean path of `status`, `sessions list` and `events` reads with (app.cli.fast_reads)
_LEAN_ADAPTERS = {
    "adapters",
    "adapters.eventlog",
    "adapters.eventlog.reader",
    "adapters.eventlog.rotation",  # rotated files are read too
    "adapters.lock",
    "adapters.files",
    "adapters.files.private",
    "adapters.sql",
    "adapters.sql.schema",
    "adapters.sql.sqlite_file",
}
_BASELINE = datetime(2026, 1, 1, tzinfo=UTC)
_REPORT = "import json, sys; print(json.dumps(sorted(m for m in sys.modules if not m.startswith('_'))))"


def _modules_after(code: str, cwd: Path) -> set[str]:
    # each test's own cache: the settings snapshot a first command saves is the next one's start
    """The modules a fresh interpreter holds after running `code` (stdout of `code` is discarded)."""
    script = f"import contextlib, io\nwith contextlib.redirect_stdout(io.StringIO()):\n    {code}\n{_REPORT}"
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=cwd,
        env=clean_env({"XDG_CACHE_HOME": str(cwd / "cache")}),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY or m.startswith(("adapters", "app.container")))


def test_the_parser_is_built_without_importing_a_command_implementation(tmp_path: Path) -> None:
    modules = _modules_after("from app.cli.main import build_parser; build_parser()", tmp_path)
    assert _heavy(modules) == []
    assert not {m for m in modules if m.startswith(("app.config.settings", "app.config.loader"))}
    assert "importlib.metadata" not in modules  # the version is read when --version asks for it


def test_help_and_version_load_no_configuration_and_no_adapter(tmp_path: Path) -> None:
    code = "from app.cli.main import main; main(['--help']); main(['--version']); main(['sessions', 'list', '--help'])"
    assert _heavy(_modules_after(code, tmp_path)) == []


def test_status_on_sqlite_never_loads_the_postgresql_driver(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text("state:\n  root: ./state\n", encoding="utf-8")
    modules = _modules_after("from app.cli.main import main; main(['--config', 'c.yaml', 'status'])", tmp_path)
    assert "app.container" in modules  # it ran through the container
    assert not {m for m in modules if m.split(".")[0] == "psycopg"}


def _configured(folder: Path) -> None:
    (folder / "c.yaml").write_text("state:\n  root: ./state\n", encoding="utf-8")


@pytest.mark.parametrize("argv", [["status"], ["status", "--json"], ["sessions", "list"], ["events", "--limit", "5"]])
def test_read_only_commands_start_without_pydantic_or_the_container_once_a_snapshot_exists(
    tmp_path: Path, argv: list[str]
) -> None:
    _configured(tmp_path)
    run = f"from app.cli.main import main; main(['--config', 'c.yaml', *{argv!r}])"
    first = _modules_after(run, tmp_path)
    assert "app.container" in first  # no snapshot yet: the full load, which saves one
    again = _modules_after(run, tmp_path)
    assert _heavy(again) == [m for m in _heavy(again) if m in _LEAN_ADAPTERS]
    assert not {m for m in again if m.startswith(("app.config.settings", "app.config.loader", "domain.model"))}


def test_a_changed_configuration_is_loaded_in_full_never_answered_from_the_old_snapshot(
    tmp_path: Path,
) -> None:
    _configured(tmp_path)
    run = "from app.cli.main import main; main(['--config', 'c.yaml', 'status'])"
    _modules_after(run, tmp_path)
    (tmp_path / "c.yaml").write_text("state:\n  root: ./other\n", encoding="utf-8")
    assert "app.container" in _modules_after(run, tmp_path)
    assert "app.container" not in _modules_after(run, tmp_path)  # the full load saved the new one


# what the lean `sessions list` of recorded sessions adds: the light readers its listing looks with
# (app.cli.lean_listing: the store's rows, every session's panes at once, the receipt folders)
_LISTING_ADAPTERS = {
    "adapters.receipts",
    "adapters.receipts.flat_json",  # a receipt whose tool input is nested too deep, read by its top level
    # each harness package's own hook names, which a receipt's event is read by: the registry, each
    # package's (empty) front, and the one `events` module of a package that has one (Gemini CLI's)
    "adapters.harnesses",
    *(f"adapters.harnesses.{name}" for name in harness_packages()),
    "adapters.harnesses.gemini.events",
    "adapters.receipts.hook_json",
    "adapters.receipts.reading",
    "adapters.agents",
    "adapters.agents.receipt_line",  # the receipt files' suffix
    "adapters.sql.session_rows",
    "adapters.tmux",
    "adapters.tmux.answers",
    "adapters.tmux.commands",
    "adapters.tmux.listing",
    "adapters.tmux.panes",
}


def test_sessions_list_of_recorded_sessions_starts_without_pydantic_or_the_container(
    tmp_path: Path,
) -> None:
    from adapters.sqlite.store import FILE_NAME, SqliteStateStore
    from domain.model import SessionRecord
    from domain.refs import WorkItemRef

    _configured(tmp_path)
    (tmp_path / "state").mkdir(mode=0o700)
    store = SqliteStateStore(tmp_path / "state" / FILE_NAME)
    for n in range(1, 6):  # no tmux server answers for them here: each is asked, each is absent
        store.save_session(SessionRecord(WorkItemRef.parse(f"github:acme/widgets#{n}"), "claude", f"c{n}", "/w"))
    store.close()
    run = "from app.cli.main import main; main(['--config', 'c.yaml', 'sessions', 'list'])"
    assert "app.container" in _modules_after(run, tmp_path)  # no snapshot yet: the full load, which saves one
    again = _modules_after(run, tmp_path)
    lean = [m for m in _heavy(again) if m in _LEAN_ADAPTERS | _LISTING_ADAPTERS]
    assert _heavy(again) == lean
    assert not {
        m for m in again if m.startswith(("app.config.settings", "app.config.loader", "app.usecases.delivery.closing"))
    }


# what the lean `sessions list` left behind (with recorded sessions it must answer within
# 4x a bare start): the domain model's dataclasses, the ledger and its codec, logging, subprocess, the
# full listing's use case and the tmux adapter it probes through, one command per session
_NOT_ON_THE_LISTING_PATH = (
    "domain.model",
    "domain.ledger",
    "domain.asks",
    "domain.park",  # its values and its rules (domain.parking)
    "domain.ports",
    "domain.events",
    "domain.policy",
    "logging",
    "subprocess",
    "adapters.sql.state_codec",
    "adapters.sql.sql_store",
    "adapters.sqlite.store",
    "adapters.tmux.adapter",
    "adapters.tmux.runner",
    "adapters.receipts.files",
    "app.usecases.views.session_listing",
    "app.usecases.delivery.watch",
)


def test_sessions_list_of_recorded_sessions_reads_its_rows_without_the_domain_model(
    tmp_path: Path,
) -> None:
    from adapters.sqlite.store import FILE_NAME, SqliteStateStore
    from domain.ledger import Ledger
    from domain.model import SessionRecord
    from domain.refs import WorkItemRef

    _configured(tmp_path)
    (tmp_path / "state").mkdir(mode=0o700)
    store = SqliteStateStore(tmp_path / "state" / FILE_NAME)
    for n in range(1, 6):  # no tmux server answers for them here: each is absent
        item = WorkItemRef.parse(f"github:acme/widgets#{n}")
        store.save_session(SessionRecord(item, "claude", f"c{n}", "/w", spawn_id=f"{n:08x}"))
        receipts = tmp_path / "state" / "receipts" / item.slug / f"{n:08x}"
        receipts.mkdir(parents=True)
        (receipts / "1767225600000000000-1.receipt").write_text('{"hook_event_name": "SessionStart"}')
    store.save_ledger(Ledger(WorkItemRef.parse("github:acme/widgets#2"), baseline_at=_BASELINE, paused=True))
    store.close()
    for argv in (["sessions", "list"], ["sessions", "list", "--json"], ["sessions", "list", "--status", "paused"]):
        run = f"from app.cli.main import main; main(['--config', 'c.yaml', *{argv!r}])"
        _modules_after(run, tmp_path)  # the first saves the snapshot, if none yet
        again = _modules_after(run, tmp_path)
        assert "app.container" not in again, argv  # the lean path answered
        assert sorted(m for m in again if m.startswith(_NOT_ON_THE_LISTING_PATH)) == [], argv
