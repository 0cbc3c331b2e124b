"""Real Claude Code's readiness and receipt latency (spawn -> SessionStart, paste -> UserPromptSubmit), offline.

    .venv/bin/python -m bench.claude_latency --spawns 10 --pastes 20

Claude runs on a private tmux server against the local Anthropic stand-in, spawned and pasted into
through the-loop's tmux adapter. The baseline, in the same run on the same server, is the tests'
harness simulator: spawn -> its "ready" record, paste -> its "submit" record (found by polling its
record file every 5 ms). Claude's times come from its hooks (`date +%s%N` as each hook starts).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from domain.model import SpawnRequest
from domain.refs import TmuxTarget
from tests.agent_tmux import AgentTmux
from tests.anthropic_standin.server import AnthropicStandIn
from tests.claude.home import ClaudeHome, claude_env
from tests.claude.hooks import HookLog
from tests.claude.rig import ClaudeRig
from tests.pinned_tools import installed
from tests.tmux_support import kinds, sim_argv

# a prompt framed like the-loop's: several lines, so Claude wraps it as pasted content
MARK = uuid.uuid4().hex  # the simulator's panes are marked as the-loop marks a harness's
PROMPT = "Work item: github:o/r#1\nEvent: comment\nDelivery: poll-comment-{n}\n\n```\nplease look again\n```"


def until(predicate: Callable[[], bool], timeout: float = 60.0) -> int:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("the harness did not answer")
        time.sleep(0.005)
    return time.time_ns()


def claude_spawns(rig: ClaudeRig, count: int) -> list[float]:
    seconds = []
    for _ in range(count):
        before = time.time_ns()
        session = rig.spawn(rig.folder(), prompt="hello")
        seconds.append((rig.hooks.wait("SessionStart", session.session_id, timeout=60).at_ns - before) / 1e9)
        rig.hooks.wait("Stop", session.session_id, timeout=60)
        rig.close()
    return seconds


def claude_pastes(rig: ClaudeRig, count: int) -> list[float]:
    session = rig.spawn(rig.folder(), prompt="hello")
    rig.hooks.wait("Stop", session.session_id, timeout=60)
    seconds = []
    for n in range(count):
        before = time.time_ns()
        rig.paste(session, PROMPT.format(n=n))
        received = rig.hooks.wait("UserPromptSubmit", session.session_id, since_ns=before, timeout=60)
        seconds.append((received.at_ns - before) / 1e9)
        rig.hooks.wait("Stop", session.session_id, since_ns=received.at_ns, timeout=60)
    rig.close()
    return seconds


def claude_pastes_at_start(rig: ClaudeRig, count: int) -> tuple[int, list[float]]:
    """Spawns with no argv prompt (as a resume is), pasting the instant SessionStart fires:
    how many pastes were submitted, and when (seconds after SessionStart)."""
    after = []
    for n in range(count):
        session = rig.spawn(rig.folder(), prompt="")
        started = rig.hooks.wait("SessionStart", session.session_id, timeout=60)
        rig.paste(session, f"pasted at SessionStart {n}")
        try:
            received = rig.hooks.wait("UserPromptSubmit", session.session_id, timeout=5)
            after.append((received.at_ns - started.at_ns) / 1e9)
        except AssertionError:
            pass  # the text sits in Claude's input line, never submitted
        rig.close()
    return len(after), after


def sim_spawns(rig: ClaudeRig, folder: Path, count: int) -> list[float]:
    seconds = []
    for n in range(count):
        record = folder / f"spawn-{n}.jsonl"
        target = TmuxTarget(f"loop-sim-{uuid.uuid4().hex[:8]}")
        before = time.time_ns()
        request = SpawnRequest(target=target, argv=sim_argv(record), cwd=str(folder), prompt="hello", mark=MARK)
        rig.adapter().spawn(request)
        seconds.append((until(lambda record=record: "ready" in kinds(record)) - before) / 1e9)
        rig.tmux.run("kill-session", "-t", target.exact)
    return seconds


def sim_pastes(rig: ClaudeRig, folder: Path, count: int) -> list[float]:
    record = folder / "pastes.jsonl"
    target = TmuxTarget(f"loop-sim-{uuid.uuid4().hex[:8]}")
    request = SpawnRequest(target=target, argv=sim_argv(record), cwd=str(folder), prompt="hello", mark=MARK)
    pane = rig.adapter().spawn(request)
    until(lambda: "ready" in kinds(record))
    seconds = []
    for n in range(count):
        before = time.time_ns()
        rig.adapter().deliver(target, PROMPT.format(n=n), delivery_id=f"d{n}", pane=pane, mark=MARK)
        seconds.append((until(lambda n=n: kinds(record).count("submit") > n) - before) / 1e9)
    rig.tmux.run("kill-session", "-t", target.exact)
    return seconds


def row(label: str, claude: list[float], baseline: list[float]) -> None:
    p50, p99 = _percentiles(claude)
    b50, b99 = _percentiles(baseline)
    ratios = f"ratio p50 {p50 / b50:5.1f}x  p99 {p99 / b99:5.1f}x"
    print(
        f"{label:<30} n={len(claude):>3}  claude p50 {p50 * 1000:6.0f} ms  p99 {p99 * 1000:6.0f} ms   "
        f"baseline p50 {b50 * 1000:4.0f} ms  p99 {b99 * 1000:4.0f} ms   {ratios}"
    )


def _percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spawns", type=int, default=10)
    parser.add_argument("--pastes", type=int, default=20)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="claude-bench-"))
    (base / "folders" / "trusted").mkdir(parents=True)
    standin = AnthropicStandIn()
    home = ClaudeHome(base / "home", trusted=(base / "folders" / "trusted",))
    tmux = AgentTmux(base / "tmux")
    tmux.tmpdir.mkdir()
    tmux.start(claude_env(home, standin.base_url))
    rig = ClaudeRig(installed("claude_code"), home, tmux, HookLog(base / "hooks"), root=base / "folders")
    try:
        first = claude_spawns(rig, 1)  # a HOME's first start migrates its configuration
        row("first spawn -> SessionStart", first, sim_spawns(rig, base, 1))
        row("spawn -> SessionStart", claude_spawns(rig, args.spawns), sim_spawns(rig, base, args.spawns))
        row("paste -> UserPromptSubmit", claude_pastes(rig, args.pastes), sim_pastes(rig, base, args.pastes))
        submitted, after = claude_pastes_at_start(rig, args.spawns)
        late = f"; submitted {min(after) * 1000:.0f}-{max(after) * 1000:.0f} ms after SessionStart" if after else ""
        print(f"paste at SessionStart (no argv prompt): {submitted}/{args.spawns} submitted{late}")
    finally:
        rig.close()
        tmux.kill_server()
        standin.close()


if __name__ == "__main__":
    main()
