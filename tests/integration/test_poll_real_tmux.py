"""The poll cycle against real tmux 3.3 and the harness simulator: the respawn, resume and
busy-server criteria end to end (spec AC1/AC2, AC4, AC12; decision point 2)."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from adapters.receipts.files import FileReceipts
from app.usecases.cycle.poll import watches
from domain.events import Event
from domain.ledger import Resolution
from domain.model import HarnessSpec, SessionState, Source
from domain.receipts import ReceiptMode
from domain.refs import RepoRef
from tests.fakes.clock import FakeClock
from tests.service.world import World
from tests.tmux_support import SIM, KillsTheServerMidCall, RealTmux, real_tmux, records, wait_for

__all__ = ["real_tmux"]


class SleepingClock(FakeClock):
    """Wall time is fake, but a wait really waits: the harness needs it to exit or start."""

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)
        super().sleep(seconds)


def _world(
    real_tmux: RealTmux, tmp_path: Path, *sim_args: str, known: tuple[str, ...] = ("sid-1",), **tmux_options: Any
) -> World:
    (tmp_path / "known").write_text("\n".join(known))
    sim = HarnessSpec(
        "sim",
        sys.executable,
        (str(SIM), "--record", str(tmp_path / "record.jsonl"), "--known-ids", str(tmp_path / "known"), *sim_args),
        ("--session-id", "{session_id}"),
        ("--resume", "{session_id}"),
        receipts=ReceiptMode.FILE,
        ready_seconds=10,
        confirm_seconds=5,
    )
    return World(
        tmux=real_tmux.adapter(**tmux_options),  # type: ignore[arg-type]
        harness="sim",
        harnesses={"sim": sim},
        clock=SleepingClock(),
        workdir=str(tmp_path),
        receipts=FileReceipts(tmp_path / "receipts"),
    )


def _starts(tmp_path: Path) -> list[dict[str, object]]:
    return [r for r in records(tmp_path / "record.jsonl") if r["kind"] == "start"]


def _ready(tmp_path: Path, count: int) -> None:
    wait_for(lambda: [r["kind"] for r in records(tmp_path / "record.jsonl")].count("ready") >= count, what="ready")


def test_ac12_a_killed_session_is_respawned_resuming_its_recorded_conversation(
    real_tmux: RealTmux, tmp_path: Path
) -> None:
    world = _world(real_tmux, tmp_path)
    ref = world.watched()
    _ready(tmp_path, 1)
    real_tmux.run("kill-session", "-t", f"={ref.target}")
    world.comment(ref, "carry on")

    world.cycle()

    _ready(tmp_path, 2)
    second = _starts(tmp_path)[1]
    assert second["resume"] == "sid-1" and "carry on" in str(second["prompt"])
    assert world.record(ref).harness_session_id == "sid-1"
    assert world.events.named(Event.SESSION_RESPAWNED)[0]["resumed"] is True


def test_ac12_an_unknown_conversation_falls_back_to_a_fresh_one(real_tmux: RealTmux, tmp_path: Path) -> None:
    world = _world(real_tmux, tmp_path, known=())
    ref = world.watched()
    _ready(tmp_path, 1)
    real_tmux.run("kill-session", "-t", f"={ref.target}")
    world.comment(ref, "carry on")

    world.cycle()

    _ready(tmp_path, 2)
    starts = _starts(tmp_path)
    assert [s["resume"] for s in starts] == [None, "sid-1", None]
    assert starts[-1]["session_id"] == "sid-2" and "carry on" in str(starts[-1]["prompt"])
    assert world.record(ref).harness_session_id == "sid-2"
    assert world.events.named(Event.SESSION_RESUME_FAILED)
    assert world.tmux.session_state(ref.target) is SessionState.LIVE


def test_ac1_ac2_a_stopped_server_is_unknown_no_respawn_no_kill_then_the_retry_lands(
    real_tmux: RealTmux, tmp_path: Path
) -> None:
    world = _world(real_tmux, tmp_path, probe_timeout=0.5, command_timeout=1.0)
    ref = world.watched()
    _ready(tmp_path, 1)
    comment = world.comment(ref, "are you there")
    real_tmux.stop()
    try:
        world.cycle()
        assert world.tmux.session_state(ref.target) is SessionState.UNKNOWN
    finally:
        real_tmux.resume()
    world.cycle()

    wait_for(lambda: any(r["kind"] == "submit" for r in records(tmp_path / "record.jsonl")), what="submit")
    assert len(_starts(tmp_path)) == 1  # never respawned, never killed
    failed = world.events.named(Event.DISPATCH_FAILED)[0]
    assert failed["will_retry"] is True and "did not answer within 1.0s" in str(failed["error"])
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    assert sum(1 for r in records(tmp_path / "record.jsonl") if r["kind"] == "paste") == 1


def test_ac4_a_dead_pane_is_cleared_verified_and_respawned(real_tmux: RealTmux, tmp_path: Path) -> None:
    world = _world(real_tmux, tmp_path)
    ref = world.watched()
    _ready(tmp_path, 1)
    real_tmux.run("respawn-pane", "-k", "-t", f"={ref.target}:", "true")
    wait_for(lambda: world.tmux.session_state(ref.target) is SessionState.DEAD, what="dead pane")
    world.comment(ref, "wake up")

    world.cycle()

    _ready(tmp_path, 2)
    assert world.tmux.session_state(ref.target) is SessionState.LIVE
    assert _starts(tmp_path)[-1]["resume"] == "sid-1"


def test_a_live_occupant_is_never_killed_by_a_first_spawn(real_tmux: RealTmux, tmp_path: Path) -> None:
    world = _world(real_tmux, tmp_path)
    ref = world.item()
    real_tmux.plant(ref.target.name)
    pid = real_tmux.run("list-panes", "-t", f"={ref.target}:", "-F", "#{pane_pid}").strip()

    world.cycle()

    assert real_tmux.run("list-panes", "-t", f"={ref.target}:", "-F", "#{pane_pid}").strip() == pid
    assert world.events.named(Event.SESSION_SPAWN_FAILED)
    assert _starts(tmp_path) == []


def _kinds(tmp_path: Path, kind: str) -> int:
    return sum(1 for r in records(tmp_path / "record.jsonl") if r["kind"] == kind)


def test_a_server_killed_mid_delivery_fails_the_attempt_and_the_next_cycle_resumes_with_the_comment_once(
    real_tmux: RealTmux, tmp_path: Path
) -> None:
    runner = KillsTheServerMidCall(real_tmux, "load-buffer")
    world = _world(real_tmux, tmp_path, runner=runner, probe_timeout=0.5, command_timeout=5.0)
    ref = world.watched()
    _ready(tmp_path, 1)
    comment = world.comment(ref, "carry on")

    world.cycle()  # the delivery meets a server that dies while it waits
    world.cycle()

    _ready(tmp_path, 2)
    second = _starts(tmp_path)[1]
    assert (runner.fired, second["resume"], str(second["prompt"]).count("carry on")) == (True, "sid-1", 1)
    assert world.events.named(Event.DISPATCH_FAILED)[0]["will_retry"] is True
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    assert _kinds(tmp_path, "paste") == 0  # the doomed paste never landed; the comment came with the respawn


def test_a_harness_killed_by_sigkill_is_respawned_resuming_its_conversation_with_the_comment(
    real_tmux: RealTmux, tmp_path: Path
) -> None:
    world = _world(real_tmux, tmp_path)
    ref = world.watched()
    _ready(tmp_path, 1)
    os.kill(int(real_tmux.run("list-panes", "-t", f"={ref.target}:", "-F", "#{pane_pid}")), signal.SIGKILL)
    wait_for(lambda: world.tmux.session_state(ref.target) is SessionState.DEAD, what="dead pane")
    comment = world.comment(ref, "wake up")

    world.cycle()

    _ready(tmp_path, 2)
    second = _starts(tmp_path)[1]
    assert (second["resume"], str(second["prompt"]).count("wake up")) == ("sid-1", 1)
    assert world.tmux.session_state(ref.target) is SessionState.LIVE
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED


def test_what_a_harness_left_of_its_process_group_is_ended_before_its_respawn(
    real_tmux: RealTmux, tmp_path: Path
) -> None:
    world = _world(real_tmux, tmp_path, "--outlive")
    ref = world.watched()
    _ready(tmp_path, 1)
    (child,) = [r["child"] for r in records(tmp_path / "record.jsonl") if r["kind"] == "child"]
    real_tmux.run("kill-session", "-t", f"={ref.target}")
    time.sleep(0.5)
    assert _alive(child)  # it outlives its session, as Gemini CLI did
    world.comment(ref, "carry on")

    try:
        world.cycle()

        _ready(tmp_path, 2)
        assert not _alive(child)  # one agent per conversation
        assert world.events.named(Event.SESSION_RESPAWNED)[0]["resumed"] is True
        assert [e["spawn_id"] for e in world.events.named(Event.SESSION_LEFTOVER_ENDED)] != []
    finally:  # the respawned harness leaves one too, once the test's tmux server is gone
        for entry in records(tmp_path / "record.jsonl"):
            if entry["kind"] == "child" and _alive(entry["child"]):
                os.kill(entry["child"], signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in {"Z", "X"}


def test_a_dotted_and_an_underscored_repository_each_get_their_own_real_session(
    real_tmux: RealTmux, tmp_path: Path
) -> None:
    world = _world(real_tmux, tmp_path)
    dotted, underscored = RepoRef.parse("acme/foo.js"), RepoRef.parse("acme/foo_js")
    world.repos = (dotted, underscored)
    world.poll._watches = watches([Source("github", dotted, "loop"), Source("github", underscored, "loop")])
    one, other = world.item(1, repo=dotted), world.item(1, repo=underscored)

    world.cycle()

    _ready(tmp_path, 2)
    names = set(real_tmux.run("list-sessions", "-F", "#{session_name}").split())
    assert {one.target.name, other.target.name} <= names and one.target != other.target
    assert world.events.named(Event.SESSION_SPAWN_FAILED) == []
