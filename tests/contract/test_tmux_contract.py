"""The TmuxPort contract, run against FakeTmux and against real tmux on a private socket."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from domain.errors import DuplicateSession, SessionMissing, TmuxFailed, TmuxUnanswered
from domain.model import SessionState, SpawnRequest
from domain.ports import TmuxPort
from domain.refs import TmuxTarget
from tests.fakes.tmux import FakeTmux, resume_fails_unless_known
from tests.tmux_support import RealTmux, kinds, pasted, real_tmux, records, sim_argv, wait_for

__all__ = ["real_tmux"]  # the fixture, used through `rig`

KNOWN_ID = "known-conversation"
A, AB = TmuxTarget("loop-a"), TmuxTarget("loop-ab")


class FakeRig:
    def __init__(self, tmp: Path) -> None:
        self.fake = FakeTmux()
        self.fake.exit_on_spawn = resume_fails_unless_known([KNOWN_ID])
        self.port: TmuxPort = self.fake
        self.tmp = tmp

    def plant(self, name: str, *, dead: bool = False) -> None:
        self.fake.add_session(name, dead=dead)

    def silence(self) -> None:
        self.fake.unresponsive = True

    def buffers(self) -> list[str]:
        return list(self.fake.buffers)

    def spawn_sim(self, target: TmuxTarget, *extra: str, prompt: str = "go", remain: bool = True) -> str:
        argv = sim_argv(self.tmp / f"{target}.jsonl", "--known-ids", str(self.tmp / "known"), *extra)
        request = SpawnRequest(target=target, argv=argv, cwd=str(self.tmp), prompt=prompt, remain_on_exit=remain)
        return self.port.spawn(request)

    def open_window(self, target: TmuxTarget) -> str:
        """An operator's `tmux new-window` in the session: it becomes the active pane."""
        return self.fake.open_window(target.name)

    def operator_received(self, target: TmuxTarget) -> list[str]:
        return self.fake.sessions[target.name].operator_received

    def panes(self, target: TmuxTarget) -> dict[str, bool]:
        """The session's panes: id -> dead."""
        session = self.fake.sessions[target.name]
        operator = {session.operator_pane: session.operator_dead} if session.operator_pane else {}
        return {session.pane_id: session.pane_dead, **operator}

    def listening(self, target: TmuxTarget) -> None:
        pass

    def received(self, target: TmuxTarget, count: int) -> tuple[list[str], int]:
        session = self.fake.sessions[target.name]
        return session.received, session.submits

    def spawn_prompt(self, target: TmuxTarget) -> str:
        return self.fake.sessions[target.name].prompt


class RealRig(FakeRig):
    def __init__(self, tmp: Path, server: RealTmux) -> None:
        self.server = server
        self.port = server.adapter(probe_timeout=0.5, command_timeout=2.0)
        self.tmp = tmp
        (tmp / "known").write_text(KNOWN_ID + "\n")

    def plant(self, name: str, *, dead: bool = False) -> None:
        self.server.plant(name, dead=dead)

    def silence(self) -> None:
        self.server.stop()

    def buffers(self) -> list[str]:
        return self.server.buffers()

    def listening(self, target: TmuxTarget) -> None:
        wait_for(lambda: "ready" in kinds(self._record(target)), what=f"{target} listening")

    def open_window(self, target: TmuxTarget) -> str:
        record = self._record(target, "operator")
        pane = self.server.run("new-window", "-P", "-F", "#{pane_id}", "-t", f"{target.exact}:", *sim_argv(record))
        wait_for(lambda: "ready" in kinds(record), what=f"{target} operator window listening")
        return pane.strip()

    def operator_received(self, target: TmuxTarget) -> list[str]:
        return pasted(self._record(target, "operator"))

    def panes(self, target: TmuxTarget) -> dict[str, bool]:
        out = self.server.run("list-panes", "-s", "-t", f"{target.exact}:", "-F", "#{pane_id} #{pane_dead}")
        return {pane: dead == "1" for pane, dead in (line.split() for line in out.splitlines())}

    def received(self, target: TmuxTarget, count: int) -> tuple[list[str], int]:
        record = self._record(target)
        wait_for(lambda: kinds(record).count("submit") >= count, what=f"{count} submits")
        return pasted(record), kinds(record).count("submit")

    def spawn_prompt(self, target: TmuxTarget) -> str:
        record = self._record(target)
        wait_for(lambda: records(record), what=f"{target} started")
        return str(records(record)[0]["prompt"])

    def _record(self, target: TmuxTarget, window: str = "harness") -> Path:
        return self.tmp / (f"{target}.jsonl" if window == "harness" else f"{target}-{window}.jsonl")


@pytest.fixture(params=["fake", pytest.param("real", marks=pytest.mark.tmux)])
def rig(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FakeRig]:
    if request.param == "fake":
        yield FakeRig(tmp_path)
    else:
        yield RealRig(tmp_path, request.getfixturevalue("real_tmux"))


def settled_state(rig: FakeRig, target: TmuxTarget) -> SessionState:
    """The state once a harness that exits at once has exited (a real process takes a moment)."""
    return wait_for(lambda: _not_live(rig.port.session_state(target)), what=f"{target} exit")


def _not_live(state: SessionState) -> SessionState | None:
    return None if state is SessionState.LIVE else state


def test_a_session_with_a_running_pane_is_live(rig: FakeRig) -> None:
    rig.plant("loop-a")
    assert rig.port.session_state(A) is SessionState.LIVE


def test_a_session_whose_every_pane_exited_is_dead(rig: FakeRig) -> None:
    rig.plant("loop-a", dead=True)
    assert rig.port.session_state(A) is SessionState.DEAD


def test_a_name_is_absent_when_no_server_runs(rig: FakeRig) -> None:
    assert rig.port.session_state(A) is SessionState.ABSENT


def test_the_exact_target_does_not_prefix_match_a_longer_name(rig: FakeRig) -> None:
    rig.plant("loop-ab")
    assert rig.port.session_state(A) is SessionState.ABSENT


def test_a_tmux_that_does_not_answer_makes_the_probe_unknown(rig: FakeRig) -> None:
    rig.plant("loop-a")
    rig.silence()
    assert rig.port.session_state(A) is SessionState.UNKNOWN


def test_a_delivery_tmux_does_not_answer_raises_unanswered(rig: FakeRig) -> None:
    rig.plant("loop-a")
    rig.silence()
    with pytest.raises(TmuxUnanswered):
        rig.port.deliver(A, "hello", delivery_id="d-1")


def test_spawning_over_a_held_name_is_refused_as_duplicate_session(rig: FakeRig) -> None:
    rig.plant("loop-a")
    with pytest.raises(DuplicateSession) as refused:
        rig.spawn_sim(A)
    assert refused.value.stderr.strip() == "duplicate session: loop-a"


def test_a_prefix_holder_does_not_block_spawning_the_shorter_name(rig: FakeRig) -> None:
    rig.plant("loop-ab")
    rig.spawn_sim(A)
    assert rig.port.session_state(A) is SessionState.LIVE


def test_kill_removes_the_session(rig: FakeRig) -> None:
    rig.plant("loop-a", dead=True)
    rig.port.kill(A)
    assert rig.port.session_state(A) is SessionState.ABSENT


def test_kill_of_a_prefix_name_fails_and_spares_the_longer_one(rig: FakeRig) -> None:
    rig.plant("loop-ab")
    with pytest.raises(TmuxFailed):
        rig.port.kill(A)
    assert rig.port.session_state(AB) is SessionState.LIVE


def test_spawn_hands_the_prompt_to_the_harness_as_its_last_argument(rig: FakeRig) -> None:
    prompt = "fix it\n\n  'quoted' \"double\" $HOME `id` ; #{pane_id}\t\n"
    rig.spawn_sim(A, prompt=prompt)
    assert rig.spawn_prompt(A) == prompt


def test_deliver_reaches_the_harness_as_one_message_and_one_submit(rig: FakeRig) -> None:
    rig.spawn_sim(A)
    rig.listening(A)
    rig.port.deliver(A, "hello\nworld", delivery_id="d-1")
    assert rig.received(A, 1) == (["hello\nworld"], 1)


def test_deliver_leaves_no_buffer_behind(rig: FakeRig) -> None:
    rig.spawn_sim(A)
    rig.listening(A)
    rig.port.deliver(A, "hello", delivery_id="d-1")
    assert rig.buffers() == []


def test_deliver_into_a_dead_pane_raises_session_missing_and_leaves_no_buffer(rig: FakeRig) -> None:
    rig.plant("loop-a", dead=True)
    with pytest.raises(SessionMissing):
        rig.port.deliver(A, "hello", delivery_id="d-1")
    assert rig.buffers() == []


def test_deliver_to_an_absent_session_raises_session_missing_and_leaves_no_buffer(rig: FakeRig) -> None:
    rig.plant("loop-ab")
    with pytest.raises(SessionMissing):
        rig.port.deliver(A, "hello", delivery_id="d-1")
    assert rig.buffers() == []


def test_a_harness_that_exits_at_once_leaves_a_dead_pane_with_remain_on_exit(rig: FakeRig) -> None:
    rig.spawn_sim(A, "--resume", "unknown-conversation")
    assert settled_state(rig, A) is SessionState.DEAD


def test_a_harness_that_exits_at_once_leaves_no_session_without_remain_on_exit(rig: FakeRig) -> None:
    rig.plant("loop-other")  # keeps the server up, so 'absent' is about the session alone
    rig.spawn_sim(A, "--resume", "unknown-conversation", remain=False)
    assert settled_state(rig, A) is SessionState.ABSENT


def test_resuming_a_known_conversation_keeps_the_harness_live(rig: FakeRig) -> None:
    rig.spawn_sim(A, "--resume", KNOWN_ID)
    rig.listening(A)
    assert rig.port.session_state(A) is SessionState.LIVE


def test_terminate_harness_ends_the_pane_and_keeps_the_session(rig: FakeRig) -> None:
    rig.spawn_sim(A)
    rig.listening(A)
    rig.port.terminate_harness(A, grace_seconds=2.0)
    assert rig.port.session_state(A) is SessionState.DEAD


def test_spawn_returns_the_harness_pane_id_that_list_panes_shows_for_the_session(rig: FakeRig) -> None:
    pane = rig.spawn_sim(A)
    assert (re.fullmatch(r"%[0-9]+", pane) is not None, list(rig.panes(A))) == (True, [pane])


def test_deliver_with_the_harness_pane_reaches_it_while_an_operator_window_is_active(rig: FakeRig) -> None:
    pane = rig.spawn_sim(A)
    rig.listening(A)
    rig.open_window(A)
    rig.port.deliver(A, "for the harness", delivery_id="d-1", pane=pane)
    assert (rig.received(A, 1), rig.operator_received(A)) == ((["for the harness"], 1), [])


def test_deliver_without_a_pane_goes_to_the_active_pane_even_an_operators(rig: FakeRig) -> None:
    rig.spawn_sim(A)
    rig.listening(A)
    rig.open_window(A)
    rig.port.deliver(A, "into the operator's shell", delivery_id="d-1")
    assert wait_for(lambda: rig.operator_received(A), what="operator paste") == ["into the operator's shell"]


def test_deliver_with_a_pane_of_another_session_is_refused_and_pastes_nothing_anywhere(rig: FakeRig) -> None:
    mine, theirs = rig.spawn_sim(A), rig.spawn_sim(AB)
    rig.listening(A)
    rig.listening(AB)
    with pytest.raises(SessionMissing):
        rig.port.deliver(A, "stray", delivery_id="d-1", pane=theirs)
    # a stray paste would reach a harness before a later one: each must see only its sentinel
    rig.port.deliver(A, "sentinel", delivery_id="d-2", pane=mine)
    rig.port.deliver(AB, "sentinel", delivery_id="d-3", pane=theirs)
    assert (rig.received(A, 1), rig.received(AB, 1), rig.buffers()) == ((["sentinel"], 1), (["sentinel"], 1), [])


def test_terminate_harness_with_its_pane_leaves_the_operator_window_alive(rig: FakeRig) -> None:
    pane = rig.spawn_sim(A)
    rig.listening(A)
    operator = rig.open_window(A)
    rig.port.terminate_harness(A, grace_seconds=2.0, pane=pane)
    assert (rig.panes(A), rig.port.session_state(A)) == ({pane: True, operator: False}, SessionState.LIVE)
