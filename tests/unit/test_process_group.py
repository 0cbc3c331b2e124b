"""The process group a pane's harness leads, read right after tmux forked it: tmux's child makes
itself a group leader (forkpty's `setsid`) a moment after the fork, and on a loaded machine the
spawn's look can come first — the group was then not recorded, and what the harness left of it
was not ended before its respawn."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from adapters.tmux.local import group_of

# it says it started, waits to be told, then leads its own group, as tmux's child does after its fork
LATE_LEADER = textwrap.dedent(
    """
    import os, sys
    print("started", flush=True)
    sys.stdin.readline()
    os.setsid()
    print("leads", flush=True)
    sys.stdin.readline()
    """
)


def test_a_process_that_leads_its_group_a_moment_after_it_starts_is_read_once_it_does() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", LATE_LEADER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        assert child.stdout.readline() == "started\n"
        assert group_of(child.pid, within=0.0) == ""  # not yet its group's leader: none to record

        child.stdin.write("\n")
        child.stdin.flush()  # it calls setsid while the look below waits for it
        found = group_of(child.pid, within=600.0)

        assert found.startswith(f"{child.pid}:") and found.split(":")[1].isdigit()
        assert child.stdout.readline() == "leads\n"
    finally:
        child.kill()
        child.wait()


def test_a_process_gone_has_no_group_and_is_not_waited_for() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert group_of(child.pid, within=600.0) == ""
