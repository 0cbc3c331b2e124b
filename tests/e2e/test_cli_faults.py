"""Faults through the real daemon: `poll` as a process, the real gh against the GitHub
stand-in, real tmux and the recording harness — gh hanging past its timeout, and the state folder
on a small ext4 of its own filled to the last block or made read-only. Each time the daemon keeps
running and says so, counts nothing the store does not hold, and delivers each comment once after."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from domain.ledger import Resolution
from domain.refs import RepoRef, WorkItemRef
from tests.e2e.loop_rig import Loop, Poller, loop
from tests.faults_support import SmallDisk, small_disk
from tests.github_standin import StandIn
from tests.github_standin.rigs import standin
from tests.github_standin.world import Note
from tests.tmux_support import real_tmux, wait_for

__all__ = ["loop", "real_tmux", "standin"]  # fixtures, imported to be used here

pytestmark = pytest.mark.gh
REPO = "acme/widgets"
SLOW = 60.0  # seconds a fault's effect may take to show on a loaded machine (a bound, never a measure)


class GitHubLoop:
    """The daemon on one GitHub repository of the stand-in, one item with a listening harness."""

    def __init__(self, loop: Loop, standin: StandIn, *, extra_sources: list[dict[str, Any]] | None = None) -> None:
        self.loop, self.github = loop, standin.reset()
        self.github.add_issue(REPO, 1, author="demo")
        self.ref = WorkItemRef(RepoRef.parse(REPO, host=standin.host), 1)
        loop.sources = [{"provider": "github", "repos": [REPO], "label": "loop"}, *(extra_sources or [])]
        loop.extra = {"integrations": {"github": {"host": standin.host, "cli": {"timeoutSeconds": 3}}}}
        loop.env = standin.gh_env()

    def start(self, *, harnesses: int = 1) -> Poller:
        poller = self.loop.running_poll()
        wait_for(lambda: self.loop.harness_kinds().count("ready") >= harnesses, timeout=SLOW, what="harnesses")
        return poller

    def comment(self, body: str) -> Note:
        with self.github.lock:
            self.github.tick(5)
            note = self.github.add_comment(REPO, 1, body, author="demo")
            self.github.tick(60)
        return note

    def hoorays(self, note: Note) -> int:
        return self.github.reactions.count((REPO, note.id, "hooray"))

    def pasted(self, text: str) -> int:
        return sum(text in paste for paste in self.loop.pasted())

    def two_failed_cycles(self, poller: Poller) -> None:
        """Two cycles failed, and the daemon is still running (or it exited: the test fails here)."""

        def exited() -> bool:
            return poller.process.poll() is not None

        wait_for(lambda: exited() or poller.stderr.count("cycle failed") >= 2, timeout=SLOW, what="two failed cycles")
        assert not exited(), f"the daemon exited on a failed cycle:\n{poller.stderr}"

    def status(self) -> tuple[int, dict[str, Any]]:
        result = self.loop.cli("status", "--json")
        return result.returncode, json.loads(result.stdout)

    def succeeded_never_beyond_the_store(self, poller: Poller) -> None:
        """Every `dispatch.succeeded` of a comment, logged or (the log unwritable) on stderr, is a
        delivery the store holds."""
        told = [*self.loop.events(), *_unwritten(poller.stderr)]
        claimed = {e["comment_id"] for e in told if e["event"] == "dispatch.succeeded" and "comment_id" in e}
        ledger = self.loop.store().ledger(self.ref)
        assert ledger is not None
        assert all(ledger.resolved[c].kind is Resolution.DELIVERED for c in claimed), claimed


def _unwritten(stderr: str) -> list[dict[str, Any]]:
    """The events the log could not take, as the daemon wrote them to stderr instead."""
    lines = [line for line in stderr.splitlines() if line.startswith("event log ") and " not written (" in line]
    return [json.loads(line[line.index("{") :]) for line in lines]


@pytest.fixture
def disk(loop: Loop, tmp_path: Path) -> Iterator[SmallDisk]:
    with small_disk(loop.state, tmp_path / "state.img") as made:
        yield made


def test_faults_gh_hanging_past_its_timeout_never_stops_the_other_repositories_and_loses_nothing(
    loop: Loop, standin: StandIn, tmp_path: Path
) -> None:
    hang = tmp_path / "hang"
    gh = tmp_path / "gh"  # the real gh, or, while `hang` exists, a gh that never answers
    gh.write_text(f'#!/bin/sh\nif [ -e "{hang}" ]; then sleep 600; fi\nexec {shutil.which("gh")} "$@"\n')
    gh.chmod(0o755)
    sandbox = {"provider": "sandbox", "repos": ["sandbox/demo"], "label": "loop"}
    github = GitHubLoop(loop, standin, extra_sources=[sandbox])
    loop.extra["integrations"]["github"]["cli"]["binary"] = str(gh)
    [local] = loop.items(1)
    poller = github.start(harnesses=2)

    hang.touch()
    said_on_github = github.comment("said while gh hangs")
    loop.comment(local, "said on the sandbox meanwhile")
    wait_for(lambda: github.pasted("said on the sandbox meanwhile") == 1, timeout=SLOW, what="the sandbox's comment")
    failed = [e for e in loop.events() if e["event"] == "poll.source_failed"]
    assert failed and "did not answer within 3s" in failed[-1]["cause"] and REPO in failed[-1]["repo"]
    assert poller.process.poll() is None and github.pasted("said while gh hangs") == 0
    hang.unlink()

    wait_for(lambda: github.pasted("said while gh hangs") == 1, timeout=SLOW, what="the comment after gh answers")
    wait_for(lambda: github.hoorays(said_on_github) == 1, timeout=SLOW, what="its 🎉")
    assert poller.stop() == 0
    assert github.pasted("said while gh hangs") == 1 and github.pasted("said on the sandbox meanwhile") == 1


def test_faults_a_full_state_disk_counts_nothing_keeps_the_daemon_running_and_delivers_once_after(
    loop: Loop, standin: StandIn, disk: SmallDisk
) -> None:
    github = GitHubLoop(loop, standin)
    poller = github.start()

    disk.fill()
    assert disk.probe_full()
    note = github.comment("said while the disk is full")
    github.two_failed_cycles(poller)
    wait_for(lambda: _unwritten(poller.stderr), timeout=SLOW, what="events on stderr")
    code, status = github.status()
    assert poller.process.poll() is None
    assert code == 5 and "database or disk is full" in status["failing"]["cause"]
    assert github.pasted("said while the disk is full") == 0 and github.hoorays(note) == 0
    disk.free()

    wait_for(lambda: github.hoorays(note) == 1, timeout=SLOW, what="the delivery once space is back")
    wait_for(lambda: github.status()[0] == 0, timeout=SLOW, what="status on time again")
    assert github.pasted("said while the disk is full") == 1
    assert poller.stop() == 0
    github.succeeded_never_beyond_the_store(poller)


def test_faults_a_read_only_state_folder_counts_nothing_keeps_the_daemon_running_and_delivers_once_after(
    loop: Loop, standin: StandIn, disk: SmallDisk
) -> None:
    github = GitHubLoop(loop, standin)
    poller = github.start()

    disk.read_only()
    note = github.comment("said while the state folder is read-only")
    github.two_failed_cycles(poller)
    assert _unwritten(poller.stderr)  # the event log too: its events went to stderr
    assert poller.process.poll() is None
    assert github.status()[0] in {0, 4}  # status answers; the lock cannot take a note: overdue in time
    assert github.pasted("said while the state folder is read-only") == 0 and github.hoorays(note) == 0
    disk.writable()

    wait_for(lambda: github.hoorays(note) == 1, timeout=SLOW, what="the delivery once writable")
    assert github.pasted("said while the state folder is read-only") == 1
    assert poller.stop() == 0
    github.succeeded_never_beyond_the_store(poller)


def test_faults_a_poller_started_on_a_read_only_state_folder_says_why_and_exits_1_never_blaming_another(
    loop: Loop, standin: StandIn, disk: SmallDisk
) -> None:
    GitHubLoop(loop, standin)
    assert loop.cli("poll", "--once").returncode == 0
    disk.read_only()

    result = loop.cli("poll")

    assert result.returncode == 1 and "another poller" not in result.stderr
    assert f"{loop.state / 'poller.lock'}: Operation not permitted" in result.stderr


def test_faults_a_poller_restarted_on_a_full_state_disk_runs_says_so_and_delivers_once_space_is_back(
    loop: Loop, standin: StandIn, disk: SmallDisk
) -> None:
    github = GitHubLoop(loop, standin)
    assert loop.cli("poll", "--once").returncode == 0  # its lock file keeps its blocks for the next poller
    disk.fill()
    note = github.comment("said before the restart, on a full disk")

    poller = loop.start_poll()
    github.two_failed_cycles(poller)
    assert github.status()[0] == 5
    disk.free()

    wait_for(lambda: github.hoorays(note) == 1, timeout=SLOW, what="the delivery once space is back")
    assert github.pasted("said before the restart, on a full disk") == 1
    assert poller.stop() == 0
    github.succeeded_never_beyond_the_store(poller)
