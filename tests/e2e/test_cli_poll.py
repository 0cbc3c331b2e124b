"""`poll` as the operator runs it: one poller per state root, a clean stop on a signal that
leaves nothing half-written, and `poll --once` exit codes that mean something."""

from __future__ import annotations

import json
import signal
import socket
import sqlite3

import pytest

from domain.events import Event
from tests.e2e.loop_rig import Loop, Poller, loop
from tests.tmux_support import real_tmux, wait_for

__all__ = ["loop", "real_tmux"]


@pytest.mark.parametrize("second", [("poll",), ("poll", "--once")], ids=["poll", "poll --once"])
def test_a_second_poller_is_refused_naming_the_holder(loop: Loop, second: tuple[str, ...]) -> None:
    first = loop.running_poll()

    result = loop.cli(*second)

    assert result.returncode == 1
    assert result.stderr.splitlines() == [result.stderr.strip()], "one line"
    assert f"another poller is running: {loop.state / 'poller.lock'} is held by pid {first.pid}" in result.stderr
    assert loop.event_names().count(Event.POLLER_BLOCKED) == 1
    assert first.process.poll() is None  # the first one carries on


def test_a_second_poller_with_the_fleet_page_is_refused_as_blocked_not_for_the_port_the_first_serves_on(
    loop: Loop,
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    loop.extra = {"ui": {"enabled": True, "port": port}}
    first = loop.running_poll()
    wait_for(lambda: f"the fleet page: http://127.0.0.1:{port}/" in first.stderr, what="the page served")

    result = loop.cli("poll")

    assert result.returncode == 1
    assert "another poller is running" in result.stderr and "cannot bind" not in result.stderr
    assert first.process.poll() is None


def test_each_cycle_prints_one_summary_line_on_stderr(loop: Loop) -> None:
    poller = loop.running_poll()
    wait_for(lambda: loop.event_names().count(Event.POLL_CYCLE) >= 2, what="two cycles")

    assert poller.stop() == 0

    cycles = [line for line in poller.stderr.splitlines() if " cycle took " in line]
    assert len(cycles) == loop.event_names().count(Event.POLL_CYCLE) >= 2
    assert all("items=0 delivered=0" in line for line in cycles)


def test_poll_once_exits_0_when_the_cycle_ran(loop: Loop) -> None:
    result = loop.cli("poll", "--once")

    assert result.returncode == 0, result.stderr
    assert loop.event_names() == [Event.POLLER_STARTED, Event.POLL_CYCLE, Event.POLLER_STOPPED]


def test_poll_once_exits_1_when_the_state_store_is_unreadable(loop: Loop) -> None:
    loop.state.mkdir()
    (loop.state / "state.sqlite3").write_bytes(b"not a database at all " * 100)

    result = loop.cli("poll", "--once")

    assert result.returncode == 1
    assert "state.sqlite3" in result.stderr and "Traceback" not in result.stderr
    assert (loop.state / "state.sqlite3").read_bytes() == b"not a database at all " * 100
    assert Event.POLL_CYCLE not in loop.event_names()


def test_poll_once_exits_1_when_no_source_could_be_read(loop: Loop) -> None:
    loop.sources = [{"provider": "github", "repos": ["octo/api"], "label": "loop"}]
    loop.extra = {"integrations": {"github": {"cli": {"binary": str(loop.root / "no-gh")}}}}

    result = loop.cli("poll", "--once")

    assert result.returncode == 1
    assert "the cycle ran but no source could be read" in result.stderr
    assert loop.event_names().count(Event.POLL_SOURCE_FAILED) == 1


# --- a signal in the middle of a cycle -------------------------------------------------------

SIGNALS = pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])


def _interrupted(loop: Loop, signum: int) -> tuple[Poller, int]:
    """Three sessions, a comment on each; a poller delivering one item at a time, each delivery
    at least 400 ms long, signalled as soon as the first delivery starts."""
    loop.max_concurrent, loop.submit_delay_ms = 1, 400
    refs = loop.with_sessions(3)
    for ref in refs:
        loop.comment(ref, f"please handle {ref}")
    poller = loop.start_poll()
    queued = lambda: [e for e in loop.events() if e["event"] == "dispatch.queued" and "comment_id" in e]  # noqa: E731
    wait_for(queued, what="a delivery")
    return poller, poller.stop(signum)


@SIGNALS
def test_a_signal_mid_cycle_finishes_the_item_in_hand_and_stops_cleanly(loop: Loop, signum: int) -> None:
    poller, status = _interrupted(loop, signum)

    assert status == 0, poller.stderr
    assert poller.stderr.splitlines()[-1].endswith(" stopped")
    assert loop.event_names()[-1] == Event.POLLER_STOPPED
    assert len([text for text in loop.pasted() if "please handle" in text]) == 1  # the one in hand, no more
    assert not (loop.state / "poller.lock").read_text().strip()  # released


def test_a_signal_mid_cycle_leaves_nothing_half_written(loop: Loop) -> None:
    _interrupted(loop, signal.SIGTERM)

    raw = loop.log.read_bytes()
    check = sqlite3.connect(loop.state / "state.sqlite3").execute("PRAGMA integrity_check").fetchall()

    assert raw.endswith(b"\n") and all(json.loads(line) for line in raw.splitlines())
    assert check == [("ok",)]
    assert len(loop.store().sessions()) == 3


def test_the_next_run_after_a_signal_delivers_the_rest_exactly_once(loop: Loop) -> None:
    _interrupted(loop, signal.SIGTERM)

    result = loop.cli("poll", "--once")

    assert result.returncode == 0, result.stderr
    asked = [f"please handle github:sandbox/demo#{n}" for n in (1, 2, 3)]
    assert [sum(ask in text for text in loop.pasted()) for ask in asked] == [1, 1, 1]


def test_a_poller_starting_deletes_the_listing_of_a_repository_no_longer_watched(loop: Loop) -> None:
    listings = loop.state / "github"
    listings.mkdir(parents=True)
    stale = listings / "github.com-acme-dropped-0123456789ab.json"
    stale.write_text("{}")

    result = loop.cli("poll", "--once")

    assert result.returncode == 0, result.stderr
    assert not stale.exists()
