"""Real Claude Code's readiness and receipts as the-loop itself sees them, offline.

    .venv/bin/python -m bench.claude_loop_latency --samples 20

Each sample is one poll cycle of the-loop's own use cases (tests/service/world.py's World over real
tmux, FileReceipts, ClaudeTrust: tests/claude/loop.py), each spawn a new work item:
- spawn -> ready is `session.ready`'s `seconds` (the SessionStart receipt's time against the
  spawn's), in a folder never trusted (the-loop records trust first and reads it back 1 s later)
  and in one trusted already;
- paste -> receipt is the UserPromptSubmit receipt's own time against the start of the tmux call
  that pastes, and paste -> confirmed is `dispatch.confirmed` against the same start: what the-loop
  waits, its 0.2 s receipt polling included.
The baseline, in the same run on the same tmux server, is the tests' harness simulator with
`receipts: file` (it writes the same receipts itself).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from domain.events import Event

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adapters.harnesses.claude.trust import ClaudeTrust
from adapters.tmux.adapter import ShTmux
from bench.claude_latency import _percentiles
from domain.model import HarnessSpec
from domain.receipts import ReceiptKind, ReceiptMode
from domain.refs import TmuxTarget, WorkItemRef
from tests.agent_tmux import AgentTmux
from tests.anthropic_standin.server import AnthropicStandIn
from tests.claude.home import ClaudeHome, claude_env
from tests.claude.hooks import HookLog
from tests.claude.loop import ClaudeLoop, claude_spec
from tests.claude.rig import ClaudeRig
from tests.pinned_tools import installed
from tests.service.world import World
from tests.tmux_support import SIM, wait_for


class TimedTmux(ShTmux):
    """The-loop's tmux adapter, noting when each paste's tmux call starts."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.pasting: list[int] = []

    def deliver(self, target: TmuxTarget, prompt: str, **options: Any) -> None:
        self.pasting.append(time.time_ns())
        super().deliver(target, prompt, **options)


def spawns(loop: ClaudeLoop, spec: HarnessSpec, count: int, *, first: int, trusted: bool) -> list[float]:
    """`session.ready` seconds of `count` first spawns, each its own item and folder."""
    seconds = []
    for n in range(first, first + count):
        world = loop.world(spec)
        ref = world.item(n)
        if trusted:
            ClaudeTrust(loop.rig.home.config_file).trust(str(loop.workdirs / ref.slug))
        world.cycle()
        seconds += [float(e["seconds"]) for e in world.events.named(Event.SESSION_READY)]
        loop.end(world, ref)
    return seconds


def pastes(loop: ClaudeLoop, spec: HarnessSpec, count: int, *, item: int) -> tuple[list[float], list[float]]:
    """Seconds from the paste to the receipt, and to the confirmation, of `count` comments."""
    tmux = TimedTmux(socket_name=loop.rig.tmux.socket, env=loop.rig.tmux.env)
    world = loop.world(spec, tmux=tmux)
    ref = world.item(item)
    world.cycle()
    received, confirmed = [], []
    for n in range(count):
        comment = world.comment(ref, f"comment {n}")
        world.cycle()
        pasted = tmux.pasting[-1]
        received.append((_receipt(world, ref, f"poll-comment-{comment.id} ") - pasted) / 1e9)
        done = next(e for e in world.events.named(Event.DISPATCH_CONFIRMED) if e.get("comment_id") == comment.id)
        confirmed.append((int(done["at_ns"]) - pasted) / 1e9)
        if spec.name == "claude":  # idle again before the next one: a paste, not a queued prompt
            wait_for(lambda n=n: _stops(loop, world, ref) > n + 1, timeout=60, what="the turn's end")
    loop.end(world, ref)
    return received, confirmed


def _stops(loop: ClaudeLoop, world: World, ref: WorkItemRef) -> int:
    return sum(h["hook_event_name"] == "Stop" for h in loop.hooks(world, ref))


def _receipt(world: World, ref: WorkItemRef, line: str) -> int:
    found = [r for r in world.watch.receipts(world.record(ref)) if r.kind is ReceiptKind.PROMPT and line in r.prompt]
    assert found and found[0].at is not None, f"no receipt holds {line!r}"
    return int(found[0].at.timestamp() * 1e9)


def row(label: str, claude: list[float], baseline: list[float]) -> None:
    p50, p99 = _percentiles(claude)
    b50, b99 = _percentiles(baseline)
    print(
        f"{label:<38} n={len(claude):>3}  claude p50 {p50 * 1000:5.0f} ms  p99 {p99 * 1000:5.0f} ms   "
        f"baseline p50 {b50 * 1000:4.0f} ms  p99 {b99 * 1000:4.0f} ms   "
        f"ratio p50 {p50 / b50:5.1f}x  p99 {p99 / b99:5.1f}x"
    )


def simulator(base: Path) -> HarnessSpec:
    argv = (str(SIM), "--record", str(base / "sim.jsonl"))
    return HarnessSpec(
        "sim", sys.executable, argv, ("--session-id", "{session_id}"), receipts=ReceiptMode.FILE, ready_seconds=10
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20)
    n = parser.parse_args().samples
    base = Path(tempfile.mkdtemp(prefix="claude-loop-bench-"))
    standin = AnthropicStandIn()
    home = ClaudeHome(base / "home")
    tmux = AgentTmux(base / "tmux")
    tmux.tmpdir.mkdir()
    tmux.start(claude_env(home, standin.base_url))
    rig = ClaudeRig(installed("claude_code"), home, tmux, HookLog(base / "hooks"), root=base / "folders")
    loop, claude, sim = ClaudeLoop(rig, base / "loop"), claude_spec(installed("claude_code")), simulator(base)
    try:
        spawns(loop, claude, 1, first=999, trusted=True)  # a HOME's first start migrates its configuration
        new_folder = spawns(loop, claude, n, first=1000, trusted=False), spawns(loop, sim, n, first=3000, trusted=False)
        trusted = spawns(loop, claude, n, first=2000, trusted=True), spawns(loop, sim, n, first=4000, trusted=True)
        row("spawn -> ready, folder never trusted", *new_folder)
        row("spawn -> ready, folder trusted", *trusted)
        claude_pastes, sim_pastes = pastes(loop, claude, n, item=5000), pastes(loop, sim, n, item=5001)
        (c_received, c_confirmed), (s_received, s_confirmed) = claude_pastes, sim_pastes
        row("paste -> receipt written", c_received, s_received)
        row("paste -> confirmed (what the-loop waits)", c_confirmed, s_confirmed)
    finally:
        tmux.kill_server()
        standin.close()


if __name__ == "__main__":
    main()
