"""The TmuxPort contract, run against FakeTmux and against real tmux on a private socket."""

from __future__ import annotations

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

    def spawn_sim(self, target: TmuxTarget, *extra: str, prompt: str = "go", remain: bool = True) -> None:
        argv = sim_argv(self.tmp / f"{target}.jsonl", "--known-ids", str(self.tmp / "known"), *extra)
        self.port.spawn(SpawnRequest(target=target, argv=argv, cwd=str(self.tmp), prompt=prompt, remain_on_exit=remain))

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

    def received(self, target: TmuxTarget, count: int) -> tuple[list[str], int]:
        record = self._record(target)
        wait_for(lambda: kinds(record).count("submit") >= count, what=f"{count} submits")
        return pasted(record), kinds(record).count("submit")

    def spawn_prompt(self, target: TmuxTarget) -> str:
        record = self._record(target)
        wait_for(lambda: records(record), what=f"{target} started")
        return str(records(record)[0]["prompt"])

    def _record(self, target: TmuxTarget) -> Path:
        return self.tmp / f"{target}.jsonl"


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
