"""The TmuxPort contract, run against FakeTmux and against real tmux on a private socket: the harness's
pane is found by the mark set at spawn, and nothing else is ever typed into or killed while alive."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.tmux.adapter import ShTmux
from domain.errors import DuplicateSession, SessionMissing, TmuxFailed, TmuxUnanswered
from domain.model import Probe, SessionState, SpawnRequest
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
        self.harness: dict[str, tuple[str, str]] = {}  # target -> (pane, mark) of its latest spawn

    def plant(self, name: str, *, dead: bool = False) -> str:
        """A session someone else started (no mark); its pane id."""
        return self.fake.add_session(name, dead=dead).panes[0].id

    def silence(self) -> None:
        self.fake.unresponsive = True

    def buffers(self) -> list[str]:
        return list(self.fake.buffers)

    def spawn_sim(
        self, target: TmuxTarget, *extra: str, prompt: str = "go", remain: bool = True, window: bool = False
    ) -> str:
        record = self._record(target, len(self.records_of))
        argv = sim_argv(record, "--known-ids", str(self.tmp / "known"), *extra)
        mark = uuid.uuid4().hex
        request = SpawnRequest(
            target=target, argv=argv, cwd=str(self.tmp), prompt=prompt, mark=mark, remain_on_exit=remain, window=window
        )
        pane = self.port.spawn(request)
        self.harness[target.name] = (pane, mark)
        self.records_of[target.name] = record
        return pane

    def deliver(self, target: TmuxTarget, text: str, *, pane: str = "", mark: str = "", delivery: str = "d") -> None:
        ours, our_mark = self.harness.get(target.name, ("%0", ""))
        self.port.deliver(target, text, delivery_id=delivery, pane=pane or ours, mark=mark or our_mark)

    def open_window(self, target: TmuxTarget) -> str:
        """An operator's `tmux new-window` in the session: it becomes the active pane."""
        return self.fake.open_window(target.name)

    def operator_received(self, target: TmuxTarget) -> list[str]:
        return self.fake.sessions[target.name].operator_received

    def attach_client(self, target: TmuxTarget) -> None:
        """An operator's terminal attached to the session."""
        self.fake.attach(target, read_only=True)

    def holds_memory(self, pane: str, size: int) -> None:
        """What the harness's process group holds (a real one holds what it holds)."""
        self.fake.memory[pane] = size

    def panes(self, target: TmuxTarget) -> dict[str, bool]:
        """The session's panes: id -> dead."""
        return {pane.id: pane.dead for pane in self.fake.sessions[target.name].panes}

    def listening(self, target: TmuxTarget) -> None:
        pass

    def received(self, target: TmuxTarget, count: int) -> tuple[list[str], int]:
        session = self.fake.sessions[target.name]
        return session.received, session.submits

    def spawn_prompt(self, target: TmuxTarget) -> str:
        return self.fake.sessions[target.name].prompt

    def exit_harness(self, target: TmuxTarget) -> None:
        self.fake.exit_harness(target.name)

    def _record(self, target: TmuxTarget, n: int) -> Path:
        return self.tmp / f"{target}-{n}.jsonl"

    @property
    def records_of(self) -> dict[str, Path]:
        if not hasattr(self, "_records_of"):
            self._records_of: dict[str, Path] = {}
        return self._records_of


class RealRig(FakeRig):
    def __init__(self, tmp: Path, server: RealTmux) -> None:
        self.server = server
        self.port = server.adapter(probe_timeout=0.5, command_timeout=2.0)
        self.tmp = tmp
        self.harness = {}
        self.clients: list[subprocess.Popen[bytes]] = []
        (tmp / "known").write_text(KNOWN_ID + "\n")

    def plant(self, name: str, *, dead: bool = False) -> str:
        self.server.plant(name, dead=dead)
        return self.server.run("list-panes", "-s", "-t", f"={name}:", "-F", "#{pane_id}").split()[0]

    def silence(self) -> None:
        self.server.stop()

    def buffers(self) -> list[str]:
        return self.server.buffers()

    def listening(self, target: TmuxTarget) -> None:
        record = self.records_of[target.name]
        wait_for(lambda: "ready" in kinds(record), what=f"{target} listening")

    def open_window(self, target: TmuxTarget) -> str:
        record = self.tmp / f"{target}-operator.jsonl"
        pane = self.server.run("new-window", "-P", "-F", "#{pane_id}", "-t", f"{target.exact}:", *sim_argv(record))
        wait_for(lambda: "ready" in kinds(record), what=f"{target} operator window listening")
        return pane.strip()

    def operator_received(self, target: TmuxTarget) -> list[str]:
        return pasted(self.tmp / f"{target}-operator.jsonl")

    def holds_memory(self, pane: str, size: int) -> None:
        pass

    def attach_client(self, target: TmuxTarget) -> None:
        """A control-mode client (`tmux -C attach`), as tmux counts an operator's terminal; it stays
        attached while its stdin is open, until the server stops."""
        client = subprocess.Popen(
            ["tmux", "-L", self.server.socket, "-C", "attach-session", "-t", target.exact],
            env={**os.environ, **self.server.env},
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.clients.append(client)
        wait_for(lambda: self.port.clients(target) == 1, what=f"a client attached to {target}")

    def panes(self, target: TmuxTarget) -> dict[str, bool]:
        out = self.server.run("list-panes", "-s", "-t", f"{target.exact}:", "-F", "#{pane_id} #{pane_dead}")
        return {pane: dead == "1" for pane, dead in (line.split() for line in out.splitlines())}

    def received(self, target: TmuxTarget, count: int) -> tuple[list[str], int]:
        record = self.records_of[target.name]
        wait_for(lambda: kinds(record).count("submit") >= count, what=f"{count} submits")
        return pasted(record), kinds(record).count("submit")

    def spawn_prompt(self, target: TmuxTarget) -> str:
        record = self.records_of[target.name]
        wait_for(lambda: records(record), what=f"{target} started")
        return str(records(record)[0]["prompt"])

    def exit_harness(self, target: TmuxTarget) -> None:
        pane, _ = self.harness[target.name]
        pid = int(self.server.run("display-message", "-p", "-t", pane, "#{pane_pid}"))
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: self.panes(target).get(pane), what=f"{pane} dead")


@pytest.fixture(params=["fake", pytest.param("real", marks=pytest.mark.tmux)])
def rig(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FakeRig]:
    if request.param == "fake":
        yield FakeRig(tmp_path)
    else:
        real = RealRig(tmp_path, request.getfixturevalue("real_tmux"))
        yield real
        for client in real.clients:
            client.kill()
            client.wait()


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
    assert rig.port.probe(A, mark="ab") == Probe(SessionState.ABSENT, SessionState.ABSENT)


def test_the_exact_target_does_not_prefix_match_a_longer_name(rig: FakeRig) -> None:
    rig.plant("loop-ab")
    assert rig.port.session_state(A) is SessionState.ABSENT


def test_a_tmux_that_does_not_answer_makes_the_probe_unknown(rig: FakeRig) -> None:
    rig.plant("loop-a")
    rig.silence()
    assert rig.port.session_state(A) is SessionState.UNKNOWN
    assert rig.port.probe(A, mark="ab") == Probe.unknown()


def test_a_delivery_tmux_does_not_answer_raises_unanswered(rig: FakeRig) -> None:
    pane = rig.plant("loop-a")
    rig.silence()
    with pytest.raises(TmuxUnanswered):
        rig.deliver(A, "hello", pane=pane, mark="ab")


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


def test_the_probe_finds_the_spawned_harness_by_its_mark(rig: FakeRig) -> None:
    pane = rig.spawn_sim(A)
    _, mark = rig.harness[A.name]
    probe = rig.port.probe(A, mark=mark)
    assert (probe.session, probe.harness, probe.pane, probe.others_live) == (
        SessionState.LIVE,
        SessionState.LIVE,
        pane,
        False,
    )
    assert rig.port.probe(A, mark=uuid.uuid4().hex).harness is SessionState.ABSENT


def test_a_dead_harness_beside_a_live_operator_window_reads_dead(rig: FakeRig) -> None:
    pane = rig.spawn_sim(A)
    rig.listening(A)
    rig.open_window(A)
    rig.exit_harness(A)
    probe = rig.port.probe(A, mark=rig.harness[A.name][1])
    assert (probe.session, probe.harness, probe.pane, probe.others_live) == (
        SessionState.LIVE,
        SessionState.DEAD,
        pane,
        True,
    )


def test_a_strangers_session_has_no_harness(rig: FakeRig) -> None:
    rig.plant("loop-a")
    probe = rig.port.probe(A, mark=uuid.uuid4().hex)
    assert (probe.session, probe.harness, probe.others_live) == (SessionState.LIVE, SessionState.ABSENT, True)


def test_deliver_reaches_the_harness_as_one_message_and_one_submit(rig: FakeRig) -> None:
    rig.spawn_sim(A)
    rig.listening(A)
    rig.deliver(A, "hello\nworld")
    assert rig.received(A, 1) == (["hello\nworld"], 1)


def test_deliver_leaves_no_buffer_behind(rig: FakeRig) -> None:
    rig.spawn_sim(A)
    rig.listening(A)
    rig.deliver(A, "hello")
    assert rig.buffers() == []


def test_deliver_into_a_dead_harness_pane_raises_session_missing_and_leaves_no_buffer(rig: FakeRig) -> None:
    rig.spawn_sim(A)
    rig.listening(A)
    rig.exit_harness(A)
    with pytest.raises(SessionMissing):
        rig.deliver(A, "hello")
    assert rig.buffers() == []


def test_deliver_to_an_absent_session_raises_session_missing_and_leaves_no_buffer(rig: FakeRig) -> None:
    pane = rig.plant("loop-ab")
    with pytest.raises(SessionMissing):
        rig.deliver(A, "hello", pane=pane, mark="ab")
    assert rig.buffers() == []


def test_a_live_pane_without_the_harnesss_mark_is_never_typed_into(rig: FakeRig) -> None:
    pane = rig.plant("loop-a")  # a stranger holds the item's name
    for mark in ("", uuid.uuid4().hex):
        with pytest.raises(SessionMissing):
            rig.deliver(A, "touch owned", pane=pane, mark=mark or "0" * 32)
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


def test_terminate_harness_ends_its_pane_and_keeps_the_session(rig: FakeRig) -> None:
    pane = rig.spawn_sim(A)
    rig.listening(A)
    rig.port.terminate_harness(A, grace_seconds=2.0, pane=pane, mark=rig.harness[A.name][1])
    assert wait_for(lambda: rig.port.session_state(A) is SessionState.DEAD, what="dead")


def test_what_outlives_a_killed_session_is_ended_once_by_its_recorded_group(rig: FakeRig) -> None:
    pane = rig.spawn_sim(A, "--outlive")
    rig.listening(A)
    group = rig.port.harness_group(A, pane=pane, mark=rig.harness[A.name][1])
    rig.port.kill(A)
    assert (group != "", rig.port.end_group(group, grace_seconds=2.0)) == (True, True)
    assert rig.port.end_group(group, grace_seconds=2.0) is False


def test_no_group_is_named_for_a_pane_that_is_not_the_harness_and_none_is_ended(rig: FakeRig) -> None:
    pane = rig.spawn_sim(A)
    rig.listening(A)
    assert rig.port.harness_group(A, pane=pane, mark=uuid.uuid4().hex) == ""
    assert rig.port.end_group("", grace_seconds=0.1) is False
    assert rig.port.end_group("1:1", grace_seconds=0.1) is False


def test_a_carriage_return_goes_into_the_harness_pane_only(rig: FakeRig) -> None:
    pane = rig.spawn_sim(A)
    rig.listening(A)
    rig.port.submit(A, pane=pane, mark=rig.harness[A.name][1])  # an Enter alone, into the harness
    operator = rig.open_window(A)
    with pytest.raises(SessionMissing):
        rig.port.submit(A, pane=operator, mark=rig.harness[A.name][1])
    assert rig.operator_received(A) == []


def test_spawn_returns_the_harness_pane_id_that_list_panes_shows_for_the_session(rig: FakeRig) -> None:
    pane = rig.spawn_sim(A)
    assert (re.fullmatch(r"%[0-9]+", pane) is not None, list(rig.panes(A))) == (True, [pane])


def test_deliver_into_the_harness_pane_reaches_it_while_an_operator_window_is_active(rig: FakeRig) -> None:
    rig.spawn_sim(A)
    rig.listening(A)
    rig.open_window(A)
    rig.deliver(A, "for the harness")
    assert (rig.received(A, 1), rig.operator_received(A)) == ((["for the harness"], 1), [])


def test_an_operators_window_is_never_typed_into_even_given_its_pane(rig: FakeRig) -> None:
    rig.spawn_sim(A)
    rig.listening(A)
    operator = rig.open_window(A)
    with pytest.raises(SessionMissing):
        rig.deliver(A, "touch owned", pane=operator)  # the harness's mark, the operator's pane
    rig.deliver(A, "sentinel")
    assert (rig.received(A, 1), rig.operator_received(A)) == ((["sentinel"], 1), [])


def test_deliver_with_a_pane_of_another_session_is_refused_and_pastes_nothing_anywhere(rig: FakeRig) -> None:
    rig.spawn_sim(A)
    rig.spawn_sim(AB)
    rig.listening(A)
    rig.listening(AB)
    theirs, their_mark = rig.harness[AB.name]
    with pytest.raises(SessionMissing):
        rig.deliver(A, "stray", pane=theirs, mark=their_mark)
    # a stray paste would reach a harness before a later one: each must see only its sentinel
    rig.deliver(A, "sentinel")
    rig.deliver(AB, "sentinel")
    assert (rig.received(A, 1), rig.received(AB, 1), rig.buffers()) == ((["sentinel"], 1), (["sentinel"], 1), [])


def test_terminate_harness_with_its_pane_leaves_the_operator_window_alive(rig: FakeRig) -> None:
    pane = rig.spawn_sim(A)
    rig.listening(A)
    operator = rig.open_window(A)
    rig.port.terminate_harness(A, grace_seconds=2.0, pane=pane, mark=rig.harness[A.name][1])
    wait_for(lambda: rig.panes(A)[pane], what="harness pane dead")
    assert (rig.panes(A), rig.port.session_state(A)) == ({pane: True, operator: False}, SessionState.LIVE)


def test_clearing_kills_dead_panes_only_and_spares_a_live_window(rig: FakeRig) -> None:
    pane = rig.spawn_sim(A)
    rig.listening(A)
    operator = rig.open_window(A)
    rig.exit_harness(A)
    rig.port.clear_dead(A)
    assert rig.panes(A) == {operator: False}
    assert pane not in rig.panes(A)


def test_clearing_a_session_whose_every_pane_is_dead_removes_it(rig: FakeRig) -> None:
    rig.plant("loop-a", dead=True)
    rig.port.clear_dead(A)
    assert rig.port.session_state(A) is SessionState.ABSENT


def test_a_harness_respawned_beside_an_operator_window_gets_its_own_marked_window(rig: FakeRig) -> None:
    rig.spawn_sim(A)
    rig.listening(A)
    operator = rig.open_window(A)
    rig.exit_harness(A)
    rig.port.clear_dead(A)
    pane = rig.spawn_sim(A, window=True)
    rig.listening(A)
    probe = rig.port.probe(A, mark=rig.harness[A.name][1])
    assert (probe.harness, probe.pane, probe.others_live) == (SessionState.LIVE, pane, True)
    rig.deliver(A, "into the new harness")
    assert (rig.received(A, 1), rig.operator_received(A), rig.panes(A)[operator]) == (
        (["into the new harness"], 1),
        [],
        False,
    )


def test_a_variable_given_with_the_spawn_reaches_the_pane_though_the_server_kept_another(
    real_tmux: RealTmux, tmp_path: Path
) -> None:
    """The trap: a pane inherits the environment of the tmux server, which keeps the one it started
    with across daemon restarts; only what the spawn gives with `-e` is the daemon's."""
    started = {**os.environ, **real_tmux.env, "API_BASE": "old"}  # the server started by an earlier daemon
    subprocess.run(
        ["tmux", "-L", real_tmux.socket, "new-session", "-d", "-s", "keeper", "sleep 600"], env=started, check=True
    )
    tmux = ShTmux(socket_name=real_tmux.socket, env={**real_tmux.env, "API_BASE": "new"})  # the restarted daemon
    shown = {name: tmp_path / name for name in ("loop-given", "loop-inherited")}
    for name, env in (("loop-given", (("API_BASE", "new"),)), ("loop-inherited", ())):
        argv = ("/bin/sh", "-c", f'printf %s "$API_BASE" > {shown[name]}; sleep 600', "sh")
        request = SpawnRequest(
            target=TmuxTarget(name), argv=argv, cwd=str(tmp_path), prompt="go", mark=uuid.uuid4().hex, env=env
        )
        tmux.spawn(request)
    wait_for(lambda: all(path.exists() and path.read_text() for path in shown.values()), what="both panes wrote")
    assert shown["loop-given"].read_text() == "new"
    assert shown["loop-inherited"].read_text() == "old"  # what happened before `env` / `passEnv`


def test_clients_counts_the_terminals_attached_to_the_session_and_a_gone_session_has_none(rig: FakeRig) -> None:
    rig.spawn_sim(A)
    assert rig.port.clients(A) == 0
    rig.attach_client(A)
    assert rig.port.clients(A) == 1
    assert rig.port.clients(AB) == 0  # no such session (and never its prefix's)


def test_group_memory_is_what_the_harness_group_holds_and_none_once_it_ended(rig: FakeRig) -> None:
    pane = rig.spawn_sim(A)
    rig.listening(A)
    _, mark = rig.harness[A.name]
    group = rig.port.harness_group(A, pane=pane, mark=mark)
    rig.holds_memory(pane, 50 * 1024 * 1024)
    assert (rig.port.group_memory(group) or 0) > 1024 * 1024  # a python process: megabytes
    rig.port.terminate_harness(A, grace_seconds=2, pane=pane, mark=mark)
    wait_for(lambda: rig.port.group_memory(group) is None, what="the group gone")
