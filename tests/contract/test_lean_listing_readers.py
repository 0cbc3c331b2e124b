"""The light readers the lean `sessions list` looks with (app.cli.lean_listing) read
what the full path's adapters read: the store's session rows as `state_codec` decodes them, every
session's panes at once as `ShTmux.probe` reads each, and the domain's values they name as strings."""

from __future__ import annotations

import inspect
import json
import stat
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from adapters.clock import SystemClock
from adapters.receipts.files import FileReceipts
from adapters.receipts.reading import read_folder, spawn_folder
from adapters.sql.session_rows import CLOSERS, SLOT_WAIT, STATUSES, ListedSession
from adapters.sql.state_codec import decode_session, encode_session
from adapters.tmux.adapter import ShTmux
from adapters.tmux.commands import MARK_OPTION
from adapters.tmux.listing import sessions_panes
from app.cli import lean_listing
from app.usecases.cluster import slot_wait
from app.usecases.delivery.watch import HarnessWatch
from app.usecases.views import session_shown
from domain.errors import TmuxUnanswered
from domain.model import (
    ClosedBy,
    CommentKind,
    HarnessSpec,
    PostedRequest,
    Probe,
    SessionRecord,
    SessionState,
    SessionStatus,
)
from domain.park import FailedTurn, Park, ParkCause
from domain.receipts import ReceiptMode
from domain.refs import Naming, TmuxTarget, WorkItemRef
from tests.fakes.tmux import FakeTmux
from tests.tmux_support import RealTmux, require_tmux

AT = datetime(2026, 1, 1, 12, 0, 5, 123456, tzinfo=UTC)
ITEM = WorkItemRef.parse("github:acme/widgets#1")


def test_the_lean_listing_names_the_domain_s_values_as_the_domain_does() -> None:
    assert tuple(status.value for status in SessionStatus) == STATUSES
    assert tuple(closer.value for closer in ClosedBy) == CLOSERS
    assert SessionStatus.PAUSED.value == session_shown.PAUSED
    shown = (lean_listing.LIVE, lean_listing.DEAD, lean_listing.ABSENT, lean_listing.UNKNOWN)
    assert shown == tuple(state.value for state in SessionState)
    assert inspect.signature(ShTmux).parameters["probe_timeout"].default == lean_listing.PROBE_SECONDS
    assert SLOT_WAIT == slot_wait.KEY


RECORDS = [
    SessionRecord(ITEM, "claude", "c1", "/w"),
    SessionRecord(
        WorkItemRef.parse("github:ghe.example.com:8443/acme-co/widgets.js#12"),
        "codex",
        "c2",
        "/srv/w",
        status=SessionStatus.CLOSED,
        closed_by=ClosedBy.UPSTREAM,
        pane_id="%3",
        created_at=AT,
        updated_at=AT,
        last_event="session.closed",
        spawn_id="00ff00ff",
        spawned_at=AT,
        spawned_monotonic=12.5,
        naming=Naming.LEGACY,
        park=Park(ParkCause.RATE_LIMIT, AT, None, (FailedTurn("c", CommentKind.ISSUE_COMMENT),)),
        requests=(
            PostedRequest("0001-2", 3, AT, closed=True),
            PostedRequest("0002-3", 4, AT),
            PostedRequest("0003-4", 5, AT, pending=True),
        ),
        requests_made=5,
    ),
    SessionRecord(ITEM, "gemini", "", "/w", status=SessionStatus.PAUSED, spawn_id="ab"),
]


@pytest.mark.parametrize("record", RECORDS, ids=["plain", "every field", "paused"])
def test_a_session_row_reads_as_the_store_decodes_it(record: SessionRecord) -> None:
    text = encode_session(record)
    _same(ListedSession(text, 3), decode_session(text, version=3))


def test_an_older_row_reads_with_the_store_s_defaults() -> None:
    data = json.loads(encode_session(SessionRecord(ITEM, "claude", "c1", "/w", status=SessionStatus.CLOSED)))
    for key in ("closed_by", "pane_id", "spawn_id", "spawned_at", "spawned_monotonic", "naming", "park", "requests"):
        del data[key]  # a closed record from before each of these was kept
    text = json.dumps(data)
    listed, decoded = ListedSession(text, 1), decode_session(text, version=1)
    _same(listed, decoded)
    assert decoded.closed_by is ClosedBy.OPERATOR and decoded.naming is Naming.LEGACY


@pytest.mark.parametrize(
    "change",
    [
        {"status": "gone"},
        {"closed_by": "nobody"},
        {"naming": "other"},
        {"created_at": "yesterday"},
        {"item": "acme/widgets#1"},
        {"recent_delivery_ids": 3},
        {"requests": [{"key": "k", "number": 1, "posted_at": "yesterday", "closed": False}]},
    ],
)
def test_a_session_row_the_store_refuses_is_refused_by_the_listing_too(change: dict[str, object]) -> None:
    text = json.dumps(json.loads(encode_session(RECORDS[0])) | change)
    with pytest.raises((ValueError, KeyError, TypeError)):
        decode_session(text, version=1)
    with pytest.raises((ValueError, KeyError, TypeError)):
        ListedSession(text, 1)


def test_a_session_row_without_a_required_field_is_refused_by_both() -> None:
    for key in ("item", "harness", "harness_session_id", "cwd", "status", "created_at", "updated_at", "last_event"):
        data = json.loads(encode_session(RECORDS[0]))
        del data[key]
        with pytest.raises(KeyError):
            decode_session(json.dumps(data), version=1)
        with pytest.raises(KeyError):
            ListedSession(json.dumps(data), 1)


def _same(listed: ListedSession, decoded: SessionRecord) -> None:
    assert (listed.item, listed.harness, listed.harness_session_id, listed.cwd) == (
        decoded.item,
        decoded.harness,
        decoded.harness_session_id,
        decoded.cwd,
    )
    assert listed.status.value == decoded.status.value
    assert (listed.closed_by.value if listed.closed_by else None) == (
        decoded.closed_by.value if decoded.closed_by else None
    )
    assert (listed.pane_id, listed.spawn_id, listed.last_event) == (
        decoded.pane_id,
        decoded.spawn_id,
        decoded.last_event,
    )
    assert (listed.updated_at, listed.spawned_at, listed.spawned_monotonic) == (
        decoded.updated_at,
        decoded.spawned_at,
        decoded.spawned_monotonic,
    )
    assert (listed.naming, listed.target) == (decoded.naming, decoded.target)
    assert listed.parked == (decoded.park is not None)
    assert listed.full() == decoded


@pytest.fixture
def tmux(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[RealTmux]:
    require_tmux()
    server = RealTmux(tmp_path / "tmux")
    server.tmpdir.mkdir(mode=0o700)
    monkeypatch.setenv("TMUX_TMPDIR", str(server.tmpdir))  # the lean reader runs tmux in this environment
    try:
        yield server
    finally:
        server.kill_server()


def _pane(tmux: RealTmux, name: str, *, dead: bool = False, mark: str = "") -> str:
    tmux.plant(name, dead=dead)
    pane = tmux.run("list-panes", "-t", f"={name}:", "-F", "#{pane_id}").strip()
    if mark:
        tmux.run("set-option", "-p", "-t", pane, MARK_OPTION, mark)
    return pane


def test_one_list_of_every_pane_says_of_each_harness_what_its_own_probe_says(tmux: RealTmux) -> None:
    live = _pane(tmux, "loop-a", mark="0000000a")
    tmux.run("split-window", "-d", "-t", "=loop-a:", "sleep 600")  # an operator's pane beside it
    unmarked = _pane(tmux, "loop-b")
    dead = _pane(tmux, "loop-c", dead=True, mark="0000000c")
    _pane(tmux, "loop-ab", mark="000000ab")  # a name `loop-a` would prefix-match
    asked = [  # (session, mark, recorded pane)
        ("loop-a", "0000000a", live),
        ("loop-a", "ffffffff", live),  # another spawn's mark: not its harness
        ("loop-b", "", unmarked),  # from before marks: the recorded pane, unmarked
        ("loop-b", "", "%999"),
        ("loop-c", "0000000c", dead),
        ("loop-gone", "0000000d", "%1"),
    ]
    panes = sessions_panes(socket_name=tmux.socket, timeout=5)
    probe = tmux.adapter()
    for name, mark, pane in asked:
        lean = lean_listing._probed(panes.get(name), mark=mark, pane=pane)
        assert lean == probe.probe(TmuxTarget(name), mark=mark, pane=pane).harness.value, (name, mark, pane)


def test_with_no_tmux_server_every_session_is_absent_as_its_probe_says(tmux: RealTmux) -> None:
    assert sessions_panes(socket_name=tmux.socket, timeout=5) == {}
    assert lean_listing._probed(None, mark="0000000a", pane="%1") == lean_listing.ABSENT
    assert tmux.adapter().probe(TmuxTarget("loop-a"), mark="0000000a", pane="%1").harness is SessionState.ABSENT


def test_a_tmux_that_does_not_answer_in_time_is_unanswered_not_read_as_no_session(tmp_path: Path) -> None:
    hung = tmp_path / "tmux"
    hung.write_text("#!/bin/sh\nexec sleep 30\n", encoding="utf-8")
    hung.chmod(hung.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(TmuxUnanswered, match="did not answer"):
        sessions_panes(socket_name="x", timeout=0.2, binary=str(hung))
    with pytest.raises(TmuxUnanswered, match="could not run"):
        sessions_panes(socket_name="x", timeout=5, binary=str(tmp_path / "no-tmux"))


def test_a_tmux_that_fails_otherwise_is_unanswered(tmp_path: Path) -> None:
    failing = tmp_path / "tmux"
    failing.write_text("#!/bin/sh\necho 'server exited unexpectedly' >&2\nexit 1\n", encoding="utf-8")
    failing.chmod(failing.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(TmuxUnanswered, match="server exited unexpectedly"):
        sessions_panes(socket_name="x", timeout=5, binary=str(failing))


_NOW = datetime.now(UTC)  # noqa: TID251 - records spawned relative to the run: far from any boundary
_BOOT = time.clock_gettime(getattr(time, "CLOCK_BOOTTIME", time.CLOCK_MONOTONIC))
_SPAWNS = {  # when the record says it was spawned, against a harness ready 30 s after its spawn
    "at boot time, long ago": {"spawned_monotonic": _BOOT - 1000.0},
    "at boot time, just now": {"spawned_monotonic": _BOOT - 1.0},
    "at another boot": {"spawned_monotonic": _BOOT + 10**9, "spawned_at": _NOW - timedelta(hours=1)},
    "on the wall clock, just now": {"spawned_at": _NOW},
    "never said": {},
}
_RECEIPTS = {
    "none": [],
    "ready": [{"hook_event_name": "SessionStart"}],
    "blocked": [{"hook_event_name": "SessionStart"}, {"hook_event_name": "PermissionRequest", "tool_name": "Bash"}],
    "tool, long ago": [{"hook_event_name": "PreToolUse", "tool_name": "Bash"}],
}


@pytest.mark.parametrize("spawn", _SPAWNS, ids=str)
@pytest.mark.parametrize("mode", list(ReceiptMode), ids=lambda mode: mode.value)
@pytest.mark.parametrize("pane", list(SessionState), ids=lambda state: state.value)
@pytest.mark.parametrize("receipts", _RECEIPTS, ids=str)
def test_the_lean_listing_judges_a_harness_as_harness_watch_does(
    tmp_path: Path, spawn: str, mode: ReceiptMode, pane: SessionState, receipts: str
) -> None:
    record = SessionRecord(ITEM, "h", "c", "/w", spawn_id="0000abcd", **_SPAWNS[spawn])  # type: ignore[arg-type]
    root = tmp_path / "receipts"
    folder = root / ITEM.slug / "0000abcd"
    folder.mkdir(parents=True)
    for n, hook in enumerate(_RECEIPTS[receipts]):
        (folder / f"{1767225600 + n}000000000-{n}.receipt").write_text(json.dumps(hook), encoding="utf-8")
    spec = HarnessSpec(name="h", binary="", receipts=mode, ready_seconds=30.0)
    watch = HarnessWatch(tmux=FakeTmux(), receipts=FileReceipts(root), clock=SystemClock())
    full = watch.state(record, spec, Probe(pane, pane))
    listed = ListedSession(encode_session(record), 1)
    read = read_folder(spawn_folder(root, listed.item, listed.spawn_id))
    assert lean_listing._harness(listed, pane.value, (mode.value, 30.0), read) is full


def test_the_requests_posted_and_their_count_survive_the_stores_codec() -> None:
    record = RECORDS[1]

    decoded = decode_session(encode_session(record), version=1)

    assert decoded.requests == record.requests and decoded.requests_made == 5
