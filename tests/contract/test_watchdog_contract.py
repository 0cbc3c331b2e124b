"""The agent watchdog's contract (`AgentWatchdogPort`) on the fake and on the real
process with a real tmux server on a private socket — it ends the daemon's marked agents once the
deadline passes, never before, and never an operator's pane; and the tmux adapter's last check
before a spawn's or a paste's tmux call."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.clock import SystemClock
from adapters.eventlog.rotation import Rotation
from adapters.tmux.server import root_mark, socket_path
from adapters.watchdog.deadline import FILE_NAME
from adapters.watchdog.process import ProcessWatchdog, code_digest
from domain.cluster import LeaseTiming
from domain.errors import LeaseLost
from domain.model import SpawnRequest
from domain.ports import AgentWatchdogPort
from domain.refs import TmuxTarget
from tests.fakes.clock import FakeClock
from tests.fakes.tmux import FakeTmux
from tests.fakes.watchdog import FakeWatchdog
from tests.tmux_support import RealTmux, real_tmux, wait_for

__all__ = ["real_tmux"]

TIMING = LeaseTiming(expiry_seconds=3, renew_deadline_seconds=2)
AGENT, OPERATOR = TmuxTarget("loop-agent"), "operator-shell"
OTHER_ROOTS_AGENT = TmuxTarget("loop-other-root")


@pytest.fixture(params=["fake", "real"])
def port(request: pytest.FixtureRequest, tmp_path: Path) -> AgentWatchdogPort:
    if request.param == "fake":
        return FakeWatchdog(FakeTmux(), FakeClock())
    return ProcessWatchdog(state_root=tmp_path, events=tmp_path / "events.jsonl", socket_name="x", timing=TIMING,
                           grace_seconds=5, version="1")  # fmt: skip


def test_a_watchdog_keeps_the_deadline_it_was_last_given(port: AgentWatchdogPort) -> None:
    assert port.deadline() is None

    port.arm(100.0)
    port.arm(102.5)

    assert port.deadline() == 102.5


@pytest.fixture
def watched(real_tmux: RealTmux, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ProcessWatchdog]:
    """A running watchdog over a real tmux server holding one agent the daemon marked and one
    operator's shell; it leaves once its deadline file is gone."""
    monkeypatch.setenv("TMUX_TMPDIR", real_tmux.env["TMUX_TMPDIR"])
    real_tmux.adapter(root_mark=root_mark(str(tmp_path))).spawn(
        SpawnRequest(AGENT, ("sh", "-c", "sleep 600"), str(tmp_path), "", mark=uuid.uuid4().hex, remain_on_exit=True)
    )
    real_tmux.plant(OPERATOR)
    watchdog = ProcessWatchdog(state_root=tmp_path, events=tmp_path / "events.jsonl", socket_name=real_tmux.socket,
                               timing=TIMING, grace_seconds=5, version="1")  # fmt: skip
    watchdog.arm(SystemClock().monotonic() + 60)
    watchdog.start()
    wait_for((tmp_path / "watchdog.pid").exists, what="the watchdog running")
    try:
        yield watchdog
    finally:
        (tmp_path / FILE_NAME).unlink(missing_ok=True)


def spawn_agent(tmux: RealTmux, state_root: Path, target: TmuxTarget = AGENT) -> None:
    """A harness pane the daemon of `state_root` started (marked as that root's)."""
    tmux.adapter(root_mark=root_mark(str(state_root))).spawn(
        SpawnRequest(target, ("sh", "-c", "sleep 600"), str(state_root), "", mark=uuid.uuid4().hex, remain_on_exit=True)
    )


def dead(tmux: RealTmux, session: str) -> list[str]:
    return tmux.run("list-panes", "-s", "-t", f"={session}:", "-F", "#{pane_dead}").split()


def test_the_watchdog_ends_the_marked_agents_once_the_deadline_passes_and_no_other_pane(
    watched: ProcessWatchdog, real_tmux: RealTmux, tmp_path: Path
) -> None:
    time.sleep(4 * TIMING.watch_every_seconds)
    before = dead(real_tmux, AGENT.name)

    watched.arm(SystemClock().monotonic() - 0.01)  # what no renewal since the last one looks like
    wait_for(lambda: dead(real_tmux, AGENT.name) == ["1"], what="the agent ended")
    log = tmp_path / "events.jsonl"
    wait_for(lambda: log.exists() and "cluster.agent_ended" in log.read_text(), what="the ending logged")

    assert before == ["0"]  # not before its deadline
    assert dead(real_tmux, OPERATOR) == ["0"]
    assert '"killed": false' in log.read_text()  # it went on SIGTERM, within the grace


def test_the_watchdog_rotates_the_event_log_as_configured_not_by_the_defaults(
    real_tmux: RealTmux, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMUX_TMPDIR", real_tmux.env["TMUX_TMPDIR"])
    real_tmux.adapter(root_mark=root_mark(str(tmp_path))).spawn(
        SpawnRequest(AGENT, ("sh", "-c", "sleep 600"), str(tmp_path), "", mark=uuid.uuid4().hex, remain_on_exit=True)
    )
    log = tmp_path / "events.jsonl"
    log.write_text('{"event": "filler"}\n' * 100)  # 2 KB, past the configured 1 KB
    watchdog = ProcessWatchdog(state_root=tmp_path, events=log, socket_name=real_tmux.socket, timing=TIMING,
                               grace_seconds=5, version="1", rotation=Rotation(1024, 1))  # fmt: skip
    watchdog.arm(SystemClock().monotonic() - 0.01)
    watchdog.start()
    try:
        # the watchdog rotates the log as it writes: the live file may be gone for a moment
        wait_for(lambda: "cluster.agent_ended" in text_of(log), what="the ending logged")
    finally:
        (tmp_path / FILE_NAME).unlink(missing_ok=True)

    assert "filler" not in log.read_text()
    assert (tmp_path / "events.jsonl.1").read_text().count("filler") == 100


def test_a_spawn_refused_by_the_last_check_starts_nothing_and_leaves_no_prompt_file(
    real_tmux: RealTmux, tmp_path: Path
) -> None:
    checked: list[str] = []

    def refuse(action: str, target: TmuxTarget) -> None:
        checked.append(action)
        raise LeaseLost(str(target), reason="past the deadline")

    tmux = real_tmux.adapter(last_check=refuse)
    with pytest.raises(LeaseLost):
        tmux.spawn(SpawnRequest(AGENT, ("sleep", "600"), str(tmp_path), "a prompt", mark="ab12"))

    assert checked == ["spawn"]
    assert real_tmux.run("list-sessions", "-F", "#{session_name}", check=False).split() == []


def test_a_watchdog_that_was_killed_is_started_again_at_the_next_renewal(
    watched: ProcessWatchdog, real_tmux: RealTmux, tmp_path: Path
) -> None:
    first = int((tmp_path / "watchdog.pid").read_text())
    os.kill(first, signal.SIGKILL)
    wait_for(lambda: not alive(first), what="the watchdog gone")

    watched.arm(SystemClock().monotonic() + 60)
    wait_for(lambda: int((tmp_path / "watchdog.pid").read_text()) != first, what="another watchdog")
    watched.arm(SystemClock().monotonic() - 0.01)

    wait_for(lambda: dead(real_tmux, AGENT.name) == ["1"], what="the agent ended by the new watchdog")


def alive(pid: int) -> bool:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped if it is this test's child: not a zombie
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_paste_refused_by_the_last_check_loads_no_buffer_and_types_nothing(
    real_tmux: RealTmux, tmp_path: Path
) -> None:
    mark, checked = uuid.uuid4().hex, list[str]()

    def refuse(action: str, target: TmuxTarget) -> None:
        checked.append(action)
        raise LeaseLost(str(target), reason="past the deadline")

    request = SpawnRequest(AGENT, ("sh", "-c", "sleep 600"), str(tmp_path), "", mark=mark, remain_on_exit=True)
    pane = real_tmux.adapter().spawn(request)
    with pytest.raises(LeaseLost):
        real_tmux.adapter(last_check=refuse).deliver(AGENT, "a prompt", delivery_id="d1", pane=pane, mark=mark)

    assert checked == ["paste"] and real_tmux.buffers() == []


def text_of(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


def holder(state_root: Path) -> int:
    """The pid of the watchdog keeping the state root's lock, as it recorded it; 0 while none has, or
    while one writes it (an older code's write is not atomic: the file is empty for a moment)."""
    try:
        return int((state_root / "watchdog.pid").read_text())
    except (FileNotFoundError, ValueError):
        return 0


def test_a_restart_with_another_tmux_socket_replaces_the_watchdog_and_the_new_servers_agent_ends_at_its_deadline(
    real_tmux: RealTmux, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMUX_TMPDIR", real_tmux.env["TMUX_TMPDIR"])
    before, after = real_tmux, RealTmux(real_tmux.tmpdir)  # the earlier daemon's server, and the new one's
    try:
        for server in (before, after):
            spawn_agent(server, tmp_path)
        earlier = ProcessWatchdog(state_root=tmp_path, events=tmp_path / "events.jsonl", socket_name=before.socket,
                                  timing=TIMING, grace_seconds=5, version="1")  # fmt: skip
        earlier.arm(SystemClock().monotonic() + 60)
        earlier.start()
        wait_for((tmp_path / "watchdog.pid").exists, what="the earlier daemon's watchdog running")
        first = holder(tmp_path)

        restarted = ProcessWatchdog(state_root=tmp_path, events=tmp_path / "events.jsonl", socket_name=after.socket,
                                    timing=TIMING, grace_seconds=5, version="1")  # fmt: skip
        restarted.arm(SystemClock().monotonic() + 60)  # the heartbeat's first renewal, then the watchdog's start
        restarted.start()
        restarted.arm(SystemClock().monotonic() - 0.01)  # no renewal since

        wait_for(lambda: dead(after, AGENT.name) == ["1"], what="the new server's agent ended at its deadline")
        wait_for(lambda: dead(before, AGENT.name) == ["1"], what="the earlier server's agent ended: nothing renews it")
        # it ends its server's agents after letting go of the lock, then leaves: the pane dies first
        wait_for(lambda: not alive(first), what="the earlier daemon's watchdog gone")
        assert holder(tmp_path) != first
    finally:
        (tmp_path / FILE_NAME).unlink(missing_ok=True)
        after.kill_server()


def test_a_restart_with_another_code_version_replaces_the_watchdog_and_leaves_the_agents_of_the_same_server(
    watched: ProcessWatchdog, real_tmux: RealTmux, tmp_path: Path
) -> None:
    first = holder(tmp_path)
    upgraded = ProcessWatchdog(state_root=tmp_path, events=tmp_path / "events.jsonl", socket_name=real_tmux.socket,
                               timing=TIMING, grace_seconds=5, version="2")  # fmt: skip
    upgraded.arm(SystemClock().monotonic() + 60)
    upgraded.start()

    wait_for(lambda: not alive(first), what="the earlier version's watchdog gone")
    wait_for(
        lambda: version_of(holder(tmp_path)) == f"2+{code_digest()}",
        what="a watchdog of the new version keeping the lock",
    )
    assert dead(real_tmux, AGENT.name) == ["0"]  # the same server: its agents are the new daemon's
    upgraded.arm(SystemClock().monotonic() - 0.01)
    wait_for(lambda: dead(real_tmux, AGENT.name) == ["1"], what="the agent ended by the new version's watchdog")


def version_of(pid: int) -> str:
    """The code version a running watchdog was started for ("" when that process has gone)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    except FileNotFoundError:
        return ""
    return argv[argv.index("--code-version") + 1] if "--code-version" in argv else ""


# a watchdog of an older code: it keeps the lock and never reads what the deadline file guards
_OLDER_WATCHDOG = """
import fcntl, os, sys, time
lock = open(os.path.join(sys.argv[3], "watchdog.lock"), "ab")
fcntl.flock(lock, fcntl.LOCK_EX)
open(os.path.join(sys.argv[3], "watchdog.pid"), "w").write(f"{os.getpid()}\\n")
time.sleep(600)
"""


def test_a_watchdog_of_an_older_code_that_does_not_step_aside_is_made_to_leave(
    real_tmux: RealTmux, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMUX_TMPDIR", real_tmux.env["TMUX_TMPDIR"])
    older = subprocess.Popen(
        [sys.executable, "-c", _OLDER_WATCHDOG, "adapters.watchdog", "--state-root", str(tmp_path)]
    )
    try:
        wait_for(lambda: holder(tmp_path) == older.pid, what="the older one")
        upgraded = ProcessWatchdog(state_root=tmp_path, events=tmp_path / "events.jsonl", socket_name=real_tmux.socket,
                                   timing=TIMING, grace_seconds=5, version="2")  # fmt: skip
        upgraded.arm(SystemClock().monotonic() + 60)
        upgraded.start()

        wait_for(
            lambda: version_of(holder(tmp_path)) == f"2+{code_digest()}",
            what="a watchdog of the new version keeping the lock",
        )
        assert older.wait(timeout=10) == -signal.SIGTERM
    finally:
        older.kill()
        older.wait()
        (tmp_path / FILE_NAME).unlink(missing_ok=True)


def test_a_changed_watchdog_source_under_the_same_version_is_another_generation(tmp_path: Path) -> None:
    source = Path(code_digest.__code__.co_filename).parent
    copy = tmp_path / "watchdog"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = code_digest(copy)
    (copy / "watch.py").write_text((copy / "watch.py").read_text() + "\n# upgraded\n")

    assert before == code_digest(source) and code_digest(copy) != before


def _tmpdir_with_slash(tmux: RealTmux, tmp_path: Path) -> str:
    return f"{tmux.tmpdir}/"


def _tmpdir_through_a_link(tmux: RealTmux, tmp_path: Path) -> str:
    link = tmp_path / "tmux-tmpdir-link"
    link.symlink_to(tmux.tmpdir)
    return str(link)


def _tmpdir_as_named(tmux: RealTmux, tmp_path: Path) -> str:
    return str(tmux.tmpdir)


@pytest.mark.parametrize(
    ("socket_before", "socket_after", "tmpdir_after"),
    [
        ("", "default", _tmpdir_as_named),  # tmux's default server, by no name and by its name
        ("default", "", _tmpdir_as_named),
        ("default", "default", _tmpdir_with_slash),
        ("default", "default", _tmpdir_through_a_link),
    ],
    ids=["no-name-then-default", "default-then-no-name", "tmpdir-with-a-slash", "tmpdir-through-a-link"],
)
def test_a_restart_that_names_the_same_tmux_server_in_other_words_leaves_its_agents_alive(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    socket_before: str,
    socket_after: str,
    tmpdir_after: Any,
) -> None:
    state_root = tmp_path / "state"
    state_root.mkdir()
    server = RealTmux(tmp_path / "tmux", socket="default")  # the default server of a private TMUX_TMPDIR
    server.tmpdir.mkdir()
    monkeypatch.setenv("TMUX_TMPDIR", str(server.tmpdir))
    try:
        spawn_agent(server, state_root)
        earlier = ProcessWatchdog(state_root=state_root, events=tmp_path / "events.jsonl", socket_name=socket_before,
                                  timing=TIMING, grace_seconds=5, version="1")  # fmt: skip
        earlier.arm(SystemClock().monotonic() + 60)
        earlier.start()
        wait_for((state_root / "watchdog.pid").exists, what="the earlier daemon's watchdog running")
        first = holder(state_root)

        monkeypatch.setenv("TMUX_TMPDIR", tmpdir_after(server, tmp_path))
        restarted = ProcessWatchdog(state_root=state_root, events=tmp_path / "events.jsonl", socket_name=socket_after,
                                    timing=TIMING, grace_seconds=5, version="1")  # fmt: skip
        restarted.arm(SystemClock().monotonic() + 60)
        restarted.start()

        wait_for(lambda: not alive(first), what="the earlier daemon's watchdog gone", timeout=30)
        wait_for(lambda: holder(state_root) != first, what="the restarted daemon's watchdog keeping the lock")
        assert dead(server, AGENT.name) == ["0"], "the agent the restarted daemon adopted was ended"
    finally:
        (state_root / FILE_NAME).unlink(missing_ok=True)
        server.kill_server()


def test_the_socket_path_follows_tmuxs_rule_for_the_default_server_and_tmpdir(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(tmp_path, target_is_directory=True)

    assert socket_path("", "") == socket_path("default", "/tmp") == socket_path("", "/tmp/")
    linked = socket_path("", str(tmp_path / "link"))
    assert socket_path("", str(tmp_path)) == socket_path("default", f"{tmp_path}/") == linked
    assert socket_path("", str(tmp_path / "missing")) == socket_path("", "")  # tmux falls back to /tmp
    assert socket_path("a", str(tmp_path)) != socket_path("b", str(tmp_path)) != socket_path("b", "")


def test_a_watchdog_ends_only_its_own_state_roots_agents_on_a_server_another_root_shares(
    real_tmux: RealTmux, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMUX_TMPDIR", real_tmux.env["TMUX_TMPDIR"])
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for root, target in ((ours, AGENT), (theirs, OTHER_ROOTS_AGENT)):
        root.mkdir()
        spawn_agent(real_tmux, root, target)
    watchdog = ProcessWatchdog(state_root=ours, events=tmp_path / "events.jsonl", socket_name=real_tmux.socket,
                               timing=TIMING, grace_seconds=5, version="1")  # fmt: skip
    watchdog.arm(SystemClock().monotonic() + 60)
    watchdog.start()
    try:
        watchdog.arm(SystemClock().monotonic() - 0.01)  # this root's lease passed; the other root's daemon renews

        wait_for(lambda: dead(real_tmux, AGENT.name) == ["1"], what="this root's agent ended")
        log = tmp_path / "events.jsonl"
        # the watchdog rotates the log as it writes: the live file may be gone for a moment
        wait_for(lambda: "cluster.agent_ended" in text_of(log), what="the ending logged")
        assert dead(real_tmux, OTHER_ROOTS_AGENT.name) == ["0"], "another state root's agent was ended"
        assert watchdog.end_now(reason="no watchdog") == 0  # the daemon's own hand: none of its own is left
        assert dead(real_tmux, OTHER_ROOTS_AGENT.name) == ["0"], "the daemon's own hand ended another root's agent"
    finally:
        (ours / FILE_NAME).unlink(missing_ok=True)


def test_a_harness_pane_that_names_no_state_root_is_not_ended_by_a_watchdog_as_it_may_be_another_roots(
    real_tmux: RealTmux, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMUX_TMPDIR", real_tmux.env["TMUX_TMPDIR"])
    spawn_agent(real_tmux, tmp_path)
    older = TmuxTarget("loop-spawned-before-root-marks")
    real_tmux.adapter().spawn(  # marked as a harness, as an older version marked it: no state root
        SpawnRequest(older, ("sh", "-c", "sleep 600"), str(tmp_path), "", mark=uuid.uuid4().hex, remain_on_exit=True)
    )
    watchdog = ProcessWatchdog(state_root=tmp_path, events=tmp_path / "events.jsonl", socket_name=real_tmux.socket,
                               timing=TIMING, grace_seconds=5, version="1")  # fmt: skip
    watchdog.arm(SystemClock().monotonic() + 60)
    watchdog.start()
    try:
        watchdog.arm(SystemClock().monotonic() - 0.01)

        wait_for(lambda: dead(real_tmux, AGENT.name) == ["1"], what="this root's agent ended")
        assert dead(real_tmux, older.name) == ["0"]
    finally:
        (tmp_path / FILE_NAME).unlink(missing_ok=True)
