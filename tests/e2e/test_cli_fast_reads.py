"""`status`, `sessions list` and `events` answered from the settings snapshot (the
lean path, app.cli.fast_reads) print byte for byte what the full path prints, through the real
entry point; whatever the lean path does not know takes the full path."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from adapters.eventlog.writer import JsonlEventLog
from adapters.sqlite.store import FILE_NAME, SqliteStateStore
from adapters.tmux.commands import MARK_OPTION
from app.cli import fast_reads
from app.config import snapshot
from app.config.loader import load
from app.usecases.cluster.slot_wait import KEY as SLOT_WAIT
from app.usecases.cycle.daemon import heartbeat_key
from domain.events import Event
from domain.ledger import Ledger
from domain.model import ClosedBy, CommentKind, SessionRecord, SessionStatus
from domain.park import FailedTurn, Park, ParkCause
from domain.refs import Naming, TmuxTarget, WorkItemRef
from domain.spending import TurnCost
from domain.usage import TurnUsage
from tests.e2e.cli import clean_env, run_cli
from tests.tmux_support import RealTmux, require_tmux

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
def test_the_lean_start_prints_byte_for_byte_what_the_full_load_prints(
    tmp_path: Path, argv: tuple[str, ...], store: bool
) -> None:
    folder = _folder(tmp_path / "work", store=store)
    cache = tmp_path / "cache"
    full = _run(folder, argv, cache)  # no snapshot yet: the full load, which saves one
    assert list((cache / "the-loop" / "snapshots").iterdir())
    lean = _run(folder, argv, cache)
    assert lean == full
    assert full[0] in (0, 3)


def test_the_lean_path_declines_what_it_does_not_answer() -> None:
    for argv in (
        ["status", "--help"],
        ["status", "--js"],
        ["status", "--json", "--json"],
        ["events", "--since", "15m"],
        ["events", "--follow"],
        ["events", "--work-item", "#1"],
        ["events", "--limit", "x"],
        ["events", "--limit"],
        ["sessions", "list", "--status"],
        ["sessions", "list", "--status", "active", "--status", "closed"],
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


def test_the_lean_path_knows_the_store_s_file_and_heartbeat_names() -> None:
    assert fast_reads.STATE_FILE == FILE_NAME
    assert heartbeat_key("any-host", shared=False) == fast_reads.HEARTBEAT


@pytest.fixture
def tmux_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealTmux]:
    """A tmux server on a private socket (tests.tmux_support), the sessions' own."""
    require_tmux()
    server = RealTmux(tmp_path_factory.mktemp("tmux"))
    try:
        yield server
    finally:
        server.kill_server()


def _record(store: SqliteStateStore, ref: str, harness: str, **fields: Any) -> WorkItemRef:
    item = WorkItemRef.parse(ref)
    at = datetime(2026, 1, 1, 12, 0, 5, tzinfo=UTC)
    store.save_session(
        SessionRecord(item, harness, f"conv-{item.number}", "/srv/w", updated_at=at, last_event="x", **fields)
    )
    return item


def _recorded(folder: Path, tmux: RealTmux) -> None:
    """Sessions of every kind the listing tells apart, in tmux on a private socket: a live harness
    marked as the-loop marks it (its item paused), a dead pane found by its recorded id (parked), a
    session tmux does not hold, an item `the-loop stop` holds, a harness the configuration lacks."""
    store = SqliteStateStore(folder / "state" / FILE_NAME)
    live = WorkItemRef.parse("github:acme/widgets#3")
    tmux.plant(live.target.name)
    pane = tmux.run("list-panes", "-t", f"={live.target.name}:", "-F", "#{pane_id}").strip()
    tmux.run("set-option", "-p", "-t", pane, MARK_OPTION, "0123abcd")
    _record(store, str(live), "claude", spawn_id="0123abcd", pane_id=pane)
    dead = WorkItemRef.parse("github:acme/widgets#4")
    tmux.plant(dead.target.name, dead=True)
    dead_pane = tmux.run("list-panes", "-t", f"={dead.target.name}:", "-F", "#{pane_id}").strip()
    since = datetime.now(UTC) - timedelta(hours=3)  # noqa: TID251 - parked three hours before the run
    park = Park(ParkCause.RATE_LIMIT, since, None, (FailedTurn("c1", CommentKind.ISSUE_COMMENT),))
    _record(store, str(dead), "cursor", pane_id=dead_pane, park=park)
    _record(store, "github:acme/widgets#5", "claude", status=SessionStatus.CLOSED, closed_by=ClosedBy.OPERATOR)
    stopped = _record(store, "github:acme/widgets#6", "no-such-harness", pane_id="%99")
    plain = WorkItemRef.parse("github:acme/widgets#7")  # a harness without receipts, long since spawned
    tmux.plant(plain.target.name)
    plain_pane = tmux.run("list-panes", "-t", f"={plain.target.name}:", "-F", "#{pane_id}").strip()
    _record(store, str(plain), "gemini", pane_id=plain_pane, spawned_at=datetime(2026, 1, 1, tzinfo=UTC))
    baseline = datetime(2026, 1, 1, tzinfo=UTC)
    store.save_ledger(Ledger(live, baseline_at=baseline, paused=True))
    store.save_ledger(Ledger(stopped, baseline_at=baseline, stopped=True))
    _held_without_a_session(store)
    # what two items' turns cost: one priced (two turns), one in tokens only
    usage = TurnUsage(input=1000, output=200, cache_write=0, cache_read=3000, model="m")
    store.record_cost(TurnCost(live, "c1", baseline, "claude", "alice", usage=usage, micro_dollars=6900))
    store.record_cost(TurnCost(live, "c2", baseline, "claude", "bob", usage=usage, micro_dollars=6900))
    store.record_cost(TurnCost(dead, "c3", baseline, "cursor", "alice", usage=usage))
    _with_receipts(folder, store, tmux)
    store.close()
    with sqlite3.connect(folder / "state" / FILE_NAME) as db:  # closed before `closed_by` was kept
        db.execute("UPDATE sessions SET data = json_remove(data, '$.closed_by') WHERE item LIKE '%#5'")


def _held_without_a_session(store: SqliteStateStore) -> None:
    """Items seen and never spawned: one paused, one stopped, one nothing holds."""
    baseline = datetime(2026, 1, 1, tzinfo=UTC)
    store.save_ledger(Ledger(WorkItemRef.parse("github:acme/widgets#12"), baseline_at=baseline, paused=True))
    store.save_ledger(Ledger(WorkItemRef.parse("github:acme/widgets#13"), baseline_at=baseline, stopped=True))
    store.save_ledger(Ledger(WorkItemRef.parse("github:acme/widgets#14"), baseline_at=baseline))


def _receipt(folder: Path, item: WorkItemRef, spawn: str, at: int, hook: dict[str, str]) -> None:
    """A receipt as Claude Code's hook leaves it, `at` seconds into 2026 (its file name is its time)."""
    stamp = int(datetime(2026, 1, 1, tzinfo=UTC).timestamp() + at) * 10**9
    spawned = folder / "state" / "receipts" / item.slug / spawn
    spawned.mkdir(parents=True, exist_ok=True)
    (spawned / f"{stamp}-{at}.receipt").write_text(json.dumps(hook), encoding="utf-8")


def _live(store: SqliteStateStore, tmux: RealTmux, ref: str, harness: str, mark: str, **fields: Any) -> WorkItemRef:
    item = WorkItemRef.parse(ref)
    name = TmuxTarget.for_slug(item.slug_by(fields.get("naming", Naming.INJECTIVE))).name
    tmux.plant(name)
    pane = tmux.run("list-panes", "-t", f"={name}:", "-F", "#{pane_id}").strip()
    if mark:
        tmux.run("set-option", "-p", "-t", pane, MARK_OPTION, mark)
    return _record(store, ref, harness, spawn_id=mark, pane_id=pane, **fields)


def _with_receipts(folder: Path, store: SqliteStateStore, tmux: RealTmux) -> None:
    """Live harnesses with receipts: one blocked on a permission (it waits, and since when), one whose
    turn ended, one whose turn failed; and a record from before names were injective, found by its
    recorded pane (no mark), its receipts under the old slug."""
    blocked = _live(store, tmux, "github:acme/widgets#8", "claude", "0000aaaa")
    _receipt(folder, blocked, "0000aaaa", 1, {"hook_event_name": "SessionStart", "source": "startup"})
    _receipt(folder, blocked, "0000aaaa", 2, {"hook_event_name": "UserPromptSubmit", "prompt": "go"})
    ask = {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": "ls"}}
    _receipt(folder, blocked, "0000aaaa", 3, {**ask, "session_id": "s8"})  # type: ignore[dict-item]
    idle = _live(store, tmux, "github:acme/widgets#9", "claude", "0000bbbb")
    _receipt(folder, idle, "0000bbbb", 1, {"hook_event_name": "SessionStart"})
    _receipt(folder, idle, "0000bbbb", 5, {"hook_event_name": "Stop"})
    failed = _live(store, tmux, "github:acme/widgets#10", "codex", "0000cccc")
    _receipt(folder, failed, "0000cccc", 7, {"hook_event_name": "StopFailure", "error": "rate_limit"})
    legacy = _live(store, tmux, "github:acme-co/widgets.js#11", "claude", "", naming=Naming.LEGACY)
    spawned = folder / "state" / "receipts" / legacy.slug_by(Naming.LEGACY) / "0000dddd"
    spawned.mkdir(parents=True)
    (spawned / "1767225609000000000-9.receipt").write_text('{"hook_event_name": "SessionStart"}', encoding="utf-8")
    unmarked = store.session(legacy)
    assert unmarked is not None
    store.save_session(replace(unmarked, spawn_id="0000dddd"))  # marked in the record, not in tmux: absent


def _masked(run: tuple[int, str, str]) -> tuple[int, str, str]:
    """How long the parked item has been parked, and how long the blocked one has waited, are the
    time of the run: the fields masked."""
    code, out, err = run
    out = re.sub(r"(parked \(rate_limit\) [^,]*), for [0-9hms]+", r"\1, for N", out)
    out = re.sub(r"(blocked: permission Bash) [0-9hms]+", r"\1 N", out)
    out = re.sub(r'"seconds_ago": [0-9.]+', '"seconds_ago": N', out)  # `status --json`: its last cycle's age
    return code, re.sub(r'"seconds": [0-9.]+', '"seconds": N', out), err


@pytest.mark.parametrize(
    "argv",
    [
        ("sessions", "list"),
        ("sessions", "list", "--json"),
        ("sessions", "list", "--status", "paused"),
        ("sessions", "list", "--status", "stopped"),
        ("sessions", "list", "--status", "closed", "--json"),
        ("sessions", "list", "--status", "active"),
        ("status",),
        ("status", "--json"),
    ],
    ids=" ".join,
)
def test_sessions_list_with_recorded_sessions_is_answered_lean_byte_for_byte(
    tmp_path: Path, tmux_server: RealTmux, argv: tuple[str, ...]
) -> None:
    folder = _folder(tmp_path / "work", store=True)
    config = CONFIG + f"routing:\n  tmux: {{socketName: {tmux_server.socket}}}\n"
    (folder / ".the-loop" / "cli-config.yaml").write_text(config, encoding="utf-8")
    _recorded(folder, tmux_server)
    cache = tmp_path / "cache"
    env = {"XDG_CACHE_HOME": str(cache), **tmux_server.env}
    full = _masked(_run_env(folder, argv, env))  # no snapshot yet: the full load, which saves one
    lean = _masked(_run_env(folder, argv, env))
    assert lean == full
    assert full[0] == (3 if argv[0] == "status" else 0)  # status: no poller runs
    assert "widgets#" in full[1] or "no sessions recorded" in full[2]
    assert _lean_answers(folder, argv, env)


def test_the_listing_compared_shows_every_kind_of_session(tmp_path: Path, tmux_server: RealTmux) -> None:
    """The cases the byte-for-byte comparison above runs on are there to compare: each kind shows."""
    folder = _folder(tmp_path / "work", store=True)
    config = CONFIG + f"routing:\n  tmux: {{socketName: {tmux_server.socket}}}\n"
    (folder / ".the-loop" / "cli-config.yaml").write_text(config, encoding="utf-8")
    _recorded(folder, tmux_server)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), **tmux_server.env}
    _, out, _ = _run_env(folder, ("sessions", "list"), env)
    for shown in (
        "blocked: permission Bash",
        "turn-failed 00:00:07",
        "idle",
        "turn-ended 00:00:05",
        "paused (control)",
        "stopped (control)",
        "closed (operator)",
        "parked (rate_limit)",
        "parked: a rate limit, until an operator resumes it",
        "blocked: on permission Bash",
        "loop-github-acme-co-widgets_js-11",
        "dead",
        "absent",
        "no session",
        "$0.0138 est.",
        "4,200 tokens",
    ):
        assert shown in out, shown


_HELD = {"github:acme/widgets#12": "paused (control)", "github:acme/widgets#13": "stopped (control)"}


@pytest.mark.parametrize(
    ("argv", "listed"),
    [
        (("sessions", "list"), ["github:acme/widgets#12", "github:acme/widgets#13"]),
        (("sessions", "list", "--status", "paused"), ["github:acme/widgets#12"]),
        (("sessions", "list", "--status", "stopped"), ["github:acme/widgets#13"]),
        (("sessions", "list", "--status", "active"), []),
        (("sessions", "list", "--json"), ["github:acme/widgets#12", "github:acme/widgets#13"]),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, tuple) else None,
)
def test_items_paused_or_stopped_before_any_spawn_are_listed_by_both_paths(
    tmp_path: Path, argv: tuple[str, ...], listed: list[str]
) -> None:
    folder = _folder(tmp_path / "work", store=True)
    store = SqliteStateStore(folder / "state" / FILE_NAME)
    _held_without_a_session(store)  # ledgers only: `the-loop pause` / `stop` before any spawn
    store.close()
    cache = tmp_path / "cache"
    full = _run(folder, argv, cache)  # no snapshot yet: the full load, which saves one
    lean = _run(folder, argv, cache)
    assert lean == full
    assert _lean_answers(folder, argv, {"XDG_CACHE_HOME": str(cache)})
    code, out, err = full
    if "--json" in argv:
        rows = [json.loads(line) for line in out.splitlines()]
        assert [row["work_item"] for row in rows] == listed
        assert [(row["paused"], row["stopped"], row["harness"], row["state"], row["status"]) for row in rows] == [
            (True, False, None, None, None),
            (False, True, None, None, None),
        ]
        return
    lines = [line for line in out.splitlines() if "widgets#" in line]
    assert [line.split()[0] for line in lines] == listed
    for line in lines:
        assert "no session" in line and _HELD[line.split()[0]] in line
    assert code == 0 and (lines or "no sessions recorded with status active" in err)


def test_sessions_list_on_postgresql_takes_the_full_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path / "work", store=True)
    config = CONFIG.replace("state: {root: ./state}", "state: {root: ./state, backend: postgres, dsn: 'host=nowhere'}")
    (folder / ".the-loop" / "cli-config.yaml").write_text(config, encoding="utf-8")
    monkeypatch.chdir(folder)
    env = {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path)}
    snapshot.write(load(None), env)
    assert list((tmp_path / "cache" / "the-loop" / "snapshots").iterdir())  # a snapshot there is
    for argv in (["sessions", "list"], ["sessions", "list", "--json"], ["status"], ["events"]):
        assert fast_reads.run_fast(argv, env) is None, argv
    assert capsys.readouterr() == ("", "")  # declined before printing a byte


def _run_env(folder: Path, argv: tuple[str, ...], env: dict[str, str]) -> tuple[int, str, str]:
    done = run_cli(folder, *argv, env=env)
    return done.returncode, done.stdout, done.stderr


def _lean_answers(folder: Path, argv: tuple[str, ...], env: dict[str, str]) -> bool:
    """Whether the lean path answered (it never imports the container)."""
    code = (
        f"import sys; from app.cli.main import main; main({list(argv)!r}); "
        "print('container' if 'app.container' in sys.modules else 'lean', file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=folder,
        env=clean_env(env),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.stderr.strip().splitlines()[-1] == "lean"


def test_sessions_list_of_a_store_holding_only_ledgers_is_answered_lean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(_folder(tmp_path / "work", store=True))
    env = {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path)}
    snapshot.write(load(None), env)
    assert fast_reads.run_fast(["sessions", "list"], env) == 0
    assert "no sessions recorded in" in capsys.readouterr().err
    store = SqliteStateStore(Path("state") / FILE_NAME)
    store.save_ledger(Ledger(WorkItemRef.parse("github:acme/widgets#1"), baseline_at=datetime(2026, 1, 1, tzinfo=UTC)))
    store.close()
    assert fast_reads.run_fast(["sessions", "list"], env) == 0  # a ledger is no session: nothing to list
    assert "no sessions recorded in" in capsys.readouterr().err


def test_sessions_list_of_an_unreadable_record_takes_the_full_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(_folder(tmp_path / "work", store=True))
    env = {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path)}
    snapshot.write(load(None), env)
    with sqlite3.connect(Path("state") / FILE_NAME) as db:
        db.execute("INSERT INTO sessions (item, data) VALUES ('github:acme/widgets#1', '{}')")
    assert fast_reads.run_fast(["sessions", "list"], env) is None
    assert capsys.readouterr() == ("", "")  # declined before printing a byte


def test_status_and_sessions_list_while_an_item_waits_for_a_slot_take_the_full_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(_folder(tmp_path / "work", store=True))
    env = {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path)}
    snapshot.write(load(None), env)
    store = SqliteStateStore(Path("state") / FILE_NAME)
    store.save_meta(f"{SLOT_WAIT}github:acme/widgets#2", json.dumps({"since": "2026-01-01T00:00:00+00:00"}))
    store.close()

    declined = [fast_reads.run_fast(argv, env) for argv in (["status"], ["status", "--json"], ["sessions", "list"])]

    assert declined == [None, None, None]  # the full path shows the wait with the host's bound
    assert capsys.readouterr() == ("", "")


def test_the_lean_path_knows_the_listing_s_statuses() -> None:
    from app.cli.sessions import add_sessions  # noqa: F401 - the parser's choices are made there
    from app.usecases.views.sessions_admin import STOPPED

    assert set(fast_reads._STATUSES) == {*(status.value for status in SessionStatus), STOPPED}


def test_status_names_what_needs_attention_by_the_state_sessions_list_shows(
    tmp_path: Path, tmux_server: RealTmux
) -> None:
    folder = _folder(tmp_path / "work", store=True)
    config = CONFIG + f"routing:\n  tmux: {{socketName: {tmux_server.socket}}}\n"
    (folder / ".the-loop" / "cli-config.yaml").write_text(config, encoding="utf-8")
    _recorded(folder, tmux_server)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), **tmux_server.env}

    _, out, _ = _run_env(folder, ("status",), env)

    held = out.split("needs attention: ")[1].splitlines()
    assert held[0] == "5"
    assert [line.split()[:2] for line in held[1:]] == [
        ["github:acme/widgets#3", "paused"],
        ["github:acme/widgets#4", "parked:"],
        ["github:acme/widgets#6", "stopped"],
        ["github:acme/widgets#12", "paused"],
        ["github:acme/widgets#13", "stopped"],
    ]
