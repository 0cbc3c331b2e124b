"""Real Gemini CLI's readiness, receipt latency and Enter, offline.

    .venv/bin/python -m bench.gemini_latency --spawns 10 --comments 100

Gemini runs on a private tmux server against the local Gemini API stand-in, spawned and pasted into
through the-loop's tmux adapter with the built-in profile (`--skip-trust`, `--session-id`, receipts
from the-loop's extension). Spawn -> its SessionStart receipt; paste -> its BeforeAgent receipt,
from the paste and from its Enter (`submitDelayMs` apart). Each comment is confirmed as the-loop
confirms it (`HarnessWatch.wait_confirmed`: one more Enter, at most `enterRetries`, while the input
box still shows the paste); the run counts the Enters sent again and the comments left in the box.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adapters.clock import SystemClock
from adapters.harnesses.gemini.hooks import receipt_channel
from adapters.receipts.files import FileReceipts
from adapters.tmux.adapter import ShTmux
from app.config.settings import Settings
from app.usecases.delivery.watch import HarnessWatch, Verdict
from domain.model import SessionRecord, SpawnRequest
from domain.receipts import ReceiptKind, receipt_line, still_typed
from domain.refs import RepoRef, TmuxTarget, WorkItemRef
from tests.agent_tmux import AgentTmux
from tests.gemini.rig import gemini_env, gemini_home
from tests.gemini_standin.server import GeminiStandIn
from tests.pinned_tools import installed

CLOCK = SystemClock()


class CountingTmux(ShTmux):
    enters = 0

    def submit(self, target: TmuxTarget, *, pane: str, mark: str) -> None:
        CountingTmux.enters += 1
        super().submit(target, pane=pane, mark=mark)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def figures(name: str, seconds: list[float]) -> str:
    ms = [s * 1000 for s in seconds] or [float("nan")]
    p50, p99 = statistics.median(ms), percentile(ms, 0.99)
    return f"{name}: n={len(seconds)} p50 {p50:.0f} ms, p99 {p99:.0f} ms, max {max(ms):.0f} ms"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--spawns", type=int, default=10)
    parser.add_argument("--comments", type=int, default=100)
    parser.add_argument("--submit-delay-ms", type=int, default=None, help="instead of the profile's")
    args = parser.parse_args()
    spec = Settings.model_validate({"routing": {"harnesses": {"gemini": {"binary": str(installed("gemini"))}}}})
    harness = spec.harness_spec("gemini")
    delay = harness.submit_delay_ms if args.submit_delay_ms is None else args.submit_delay_ms
    api = GeminiStandIn()
    base = Path(tempfile.mkdtemp(prefix="gemini-bench-"))
    folder = gemini_home(base / "home")
    tmux = AgentTmux(base / "tmux")
    tmux.tmpdir.mkdir()
    tmux.start(gemini_env(base / "home", api.base_url))
    adapter = CountingTmux(socket_name=tmux.socket, env=tmux.env)
    receipts = FileReceipts(base / "receipts", channels={"gemini": partial(receipt_channel, home=folder)})
    watch = HarnessWatch(tmux=adapter, receipts=receipts, clock=CLOCK)
    try:
        ready: list[float] = []
        record = None
        for n in range(args.spawns):
            cwd = base / "work" / str(n)
            cwd.mkdir(parents=True)
            spawn = uuid.uuid4().hex
            item = WorkItemRef(RepoRef("github.com", "o", "r"), n + 1)
            channel = receipts.prepare(item, spawn, mode=harness.receipts, hooks=harness.hooks)
            conversation = str(uuid.uuid4())
            target = item.target
            before = CLOCK.now().timestamp()
            request = SpawnRequest(
                target=target,
                argv=harness.argv(conversation, resume=False),
                cwd=str(cwd),
                prompt="hello",
                mark=spawn,
                remain_on_exit=True,
                env=channel.env,
            )
            pane = adapter.spawn(request)
            record = SessionRecord(item, "gemini", conversation, str(cwd), pane_id=pane, spawn_id=spawn)
            while not [r for r in receipts.read(item, spawn) if r.kind is ReceiptKind.READY]:
                time.sleep(0.005)
            (first,) = [r for r in receipts.read(item, spawn) if r.kind is ReceiptKind.READY]
            assert first.at is not None
            ready.append(first.at.timestamp() - before)
            if n < args.spawns - 1:
                tmux.run("kill-session", "-t", target.exact, check=False)
        assert record is not None
        while not [r for r in receipts.read(item, record.spawn_id) if r.kind is ReceiptKind.TURN_ENDED]:
            time.sleep(0.05)
        from_paste, from_enter, confirmed, left = [], [], 0, 0
        for n in range(args.comments):
            line = receipt_line(f"bench-{n}", uuid.uuid4().hex[:16])
            prompt = f"[the-loop] New comment\n{line}\nAuthor: @alice\n\n```untrusted-comment\ncomment {n}\n```\n"
            ended = len([r for r in receipts.read(item, record.spawn_id) if r.kind is ReceiptKind.TURN_ENDED])
            start = CLOCK.now().timestamp()
            adapter.deliver(
                record.target,
                prompt,
                delivery_id=f"bench-{n}",
                pane=record.pane_id,
                mark=record.spawn_id,
                submit_delay_ms=delay,
            )
            entered = CLOCK.now().timestamp()
            watched = watch.wait_confirmed(record, harness, line, spawned=False)
            confirmed += watched.verdict is Verdict.YES
            got = [r for r in receipts.read(item, record.spawn_id) if r.kind is ReceiptKind.PROMPT and line in r.prompt]
            if got and got[0].at is not None:
                from_paste.append(got[0].at.timestamp() - start)
                from_enter.append(got[0].at.timestamp() - entered)
            left += still_typed(adapter.screen(record.target, record.pane_id, lines=60), line)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and ended + 1 > len(
                [r for r in receipts.read(item, record.spawn_id) if r.kind is ReceiptKind.TURN_ENDED]
            ):
                time.sleep(0.05)
        print(
            f"Gemini CLI {installed('gemini').parts[-3]}, submitDelayMs {delay}, enterRetries {harness.enter_retries}"
        )
        print(figures("spawn -> ready receipt", ready))
        print(figures("paste -> prompt receipt (from the paste)", from_paste))
        print(figures("paste -> prompt receipt (from its Enter)", from_enter))
        again = CountingTmux.enters
        print(f"comments: {args.comments}, confirmed {confirmed}, Enters sent again {again}, left in the box {left}")
    finally:
        tmux.kill_server()
        api.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
