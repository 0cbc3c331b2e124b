"""Counts tmux invocations (and time) per probe, delivery and spawn on a private tmux server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adapters.tmux.adapter import ShTmux
from adapters.tmux.runner import ShRunner, TmuxRunner
from domain.model import SpawnRequest
from domain.refs import TmuxTarget

ROUNDS = 20


class CountingRunner(TmuxRunner):
    def __init__(self, inner: ShRunner) -> None:
        self.inner = inner
        self.count = 0

    def __call__(self, args: Sequence[str], *, timeout: float, stdin: bytes | None = None) -> str:
        self.count += 1
        return self.inner(args, timeout=timeout, stdin=stdin)

    def foreground(self, args: Sequence[str]) -> int:
        self.count += 1
        return self.inner.foreground(args)


def measure(runner: CountingRunner, label: str, action: object) -> None:
    before, start = runner.count, time.perf_counter()
    for _ in range(ROUNDS):
        action()  # type: ignore[operator]
    per_call = (time.perf_counter() - start) / ROUNDS * 1000
    print(f"{label:<34} {(runner.count - before) / ROUNDS:>4.1f} tmux invocations  {per_call:6.1f} ms")


def unanswered_probe(tmux: ShTmux, target: TmuxTarget, env: dict[str, str]) -> None:
    """A stopped server: the probe must come back after probe_timeout, not later."""
    pid = int(
        subprocess.check_output(["tmux", "-L", "bench", "display-message", "-p", "#{pid}"], env={**os.environ, **env})
    )
    slow = ShTmux(socket_name="bench", env=env, probe_timeout=0.5)
    os.kill(pid, signal.SIGSTOP)
    try:
        start = time.perf_counter()
        state = slow.session_state(target)
        took = time.perf_counter() - start
    finally:
        os.kill(pid, signal.SIGCONT)
    print(f"probe of a stopped server: {state.value} after {took:.2f} s (probe_timeout 0.5 s, ratio {took / 0.5:.2f})")


def main() -> None:
    env = {"TMUX_TMPDIR": tempfile.mkdtemp(prefix="tmux-bench-")}
    runner = CountingRunner(ShRunner(env=env))
    tmux = ShTmux(socket_name="bench", runner=runner)
    target = TmuxTarget("loop-bench")
    pane = tmux.spawn(SpawnRequest(target=target, argv=("sh", "-c", "cat >/dev/null", "harness"), cwd="/", prompt="go"))
    names = iter(range(10**6))
    try:
        measure(runner, "probe (session_state)", lambda: tmux.session_state(target))
        measure(runner, "deliver (active pane)", lambda: tmux.deliver(target, "hello\n" * 200, delivery_id="d"))
        measure(
            runner,
            "deliver into the harness pane",
            lambda: tmux.deliver(target, "hello\n" * 200, delivery_id="d", pane=pane),
        )
        measure(
            runner,
            "deliver, pane, submitDelayMs=1",
            lambda: tmux.deliver(target, "hi", delivery_id="d", submit_delay_ms=1, pane=pane),
        )
        measure(
            runner,
            "spawn (remain-on-exit)",
            lambda: tmux.spawn(
                SpawnRequest(
                    target=TmuxTarget(f"loop-s{next(names)}"), argv=("true",), cwd="/", prompt="p", remain_on_exit=True
                )
            ),
        )
        unanswered_probe(tmux, target, env)
    finally:
        subprocess.run(["tmux", "-L", "bench", "kill-server"], env={**os.environ, **env}, check=False)


if __name__ == "__main__":
    main()
