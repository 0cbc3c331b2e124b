"""tmux cost on a private server: invocations and time per probe, delivery and spawn, and the
delivery's cost as a ratio of the original six-command sequence run in the same process.

`python bench/tmux_cost.py [--rounds N]`. The ratio's two sides run interleaved, on the same
server and into the same pane, `--rounds` times (alternating which goes first); the medians are
compared. The baseline is what a delivery cost before it was one invocation: has-session,
list-panes, two load-buffer, two paste-buffer, each a bare `subprocess.run` with no deadline.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adapters.tmux.adapter import ShTmux
from adapters.tmux.runner import ShRunner, TmuxRunner
from domain.model import SpawnRequest
from domain.refs import TmuxTarget

SOCKET = "bench"
PROMPT = "hello\n" * 200
MARK = "be7c4"  # the harness pane's mark, as a spawn sets it


class CountingRunner(TmuxRunner):
    def __init__(self, inner: TmuxRunner) -> None:
        self.inner = inner
        self.count = 0

    def __call__(self, args: Sequence[str], *, timeout: float, stdin: bytes | None = None) -> str:
        self.count += 1
        return self.inner(args, timeout=timeout, stdin=stdin)

    def foreground(self, args: Sequence[str]) -> int:
        self.count += 1
        return self.inner.foreground(args)


class BareTmux:
    """The original delivery: six tmux invocations, each a bare exec."""

    def __init__(self, env: dict[str, str], target: TmuxTarget, pane: str) -> None:
        self._env, self._target, self._pane = env, target, pane

    def deliver(self, prompt: str) -> None:
        token = uuid.uuid4().hex
        prompt_buffer, submit_buffer = f"b-{token}-prompt", f"b-{token}-submit"
        self._run("has-session", "-t", self._target.exact)
        self._run("list-panes", "-s", "-t", f"{self._target.exact}:", "-F", "#{pane_dead}")
        self._run("load-buffer", "-b", prompt_buffer, "-", stdin=prompt.encode())
        self._run("load-buffer", "-b", submit_buffer, "-", stdin=b"\r")
        self._run("paste-buffer", "-p", "-d", "-b", prompt_buffer, "-t", self._pane)
        self._run("paste-buffer", "-d", "-b", submit_buffer, "-t", self._pane)

    def _run(self, *args: str, stdin: bytes | None = None) -> None:
        subprocess.run(["tmux", "-L", SOCKET, *args], input=stdin, env=self._env, capture_output=True, check=True)


def measure(runner: CountingRunner, label: str, rounds: int, action: Callable[[], object]) -> None:
    before, start = runner.count, time.perf_counter()
    for _ in range(rounds):
        action()
    per_call = (time.perf_counter() - start) / rounds * 1000
    print(f"{label:<34} {(runner.count - before) / rounds:>4.1f} tmux invocations  {per_call:6.1f} ms")


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return (time.perf_counter() - start) * 1000


def delivery_ratio(tmux: ShTmux, bare: BareTmux, target: TmuxTarget, pane: str, rounds: int) -> None:
    def ours() -> None:
        tmux.probe(target, mark=MARK, pane=pane)
        tmux.deliver(target, PROMPT, delivery_id="d", pane=pane, mark=MARK)

    sides: dict[str, list[float]] = {"ours": [], "bare": []}
    runs: dict[str, Callable[[], object]] = {"ours": ours, "bare": lambda: bare.deliver(PROMPT)}
    for side in runs.values():  # warm both paths before counting
        side()
    for index in range(rounds):
        order = ("ours", "bare") if index % 2 == 0 else ("bare", "ours")
        for name in order:
            sides[name].append(timed(runs[name]))
    ours_ms, bare_ms = statistics.median(sides["ours"]), statistics.median(sides["bare"])
    print(f"delivery (probe + paste and submit)  {ours_ms:6.1f} ms  median of {rounds}, interleaved")
    print(f"original six-command sequence        {bare_ms:6.1f} ms  (bare exec each)")
    print(f"delivery cost ratio                  {ours_ms / bare_ms:6.2f}")


def unanswered_probe(target: TmuxTarget, env: dict[str, str]) -> None:
    """A stopped server: the probe must come back after probe_timeout, not later."""
    pid = int(subprocess.check_output(["tmux", "-L", SOCKET, "display-message", "-p", "#{pid}"], env=env))
    slow = ShTmux(socket_name=SOCKET, env=env, probe_timeout=0.5)
    os.kill(pid, signal.SIGSTOP)
    try:
        start = time.perf_counter()
        state = slow.session_state(target)
        took = time.perf_counter() - start
    finally:
        os.kill(pid, signal.SIGCONT)
    print(f"probe of a stopped server: {state.value} after {took:.2f} s (probe_timeout 0.5 s, ratio {took / 0.5:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    rounds = parser.parse_args().rounds
    private = {"TMUX_TMPDIR": tempfile.mkdtemp(prefix="tmux-bench-")}
    env = {**os.environ, **private}
    runner = CountingRunner(ShRunner(env=private))
    tmux = ShTmux(socket_name=SOCKET, runner=runner)
    target = TmuxTarget("loop-bench")
    harness = ("sh", "-c", "cat >/dev/null", "harness")
    pane = tmux.spawn(SpawnRequest(target=target, argv=harness, cwd="/", prompt="go", mark=MARK))
    names = iter(range(10**6))
    try:
        measure(runner, "probe (the marked pane)", rounds, lambda: tmux.probe(target, mark=MARK, pane=pane))
        measure(
            runner,
            "deliver into the harness pane",
            rounds,
            lambda: tmux.deliver(target, PROMPT, delivery_id="d", pane=pane, mark=MARK),
        )
        measure(
            runner,
            "deliver, submitDelayMs=1",
            rounds,
            lambda: tmux.deliver(target, "hi", delivery_id="d", submit_delay_ms=1, pane=pane, mark=MARK),
        )
        measure(
            runner,
            "spawn (remain-on-exit)",
            rounds,
            lambda: tmux.spawn(
                SpawnRequest(
                    target=TmuxTarget(f"loop-s{next(names)}"),
                    argv=("true",),
                    cwd="/",
                    prompt="p",
                    remain_on_exit=True,
                    mark=MARK,
                )
            ),
        )
        delivery_ratio(tmux, BareTmux(env, target, pane), target, pane, rounds)
        unanswered_probe(target, env)
    finally:
        subprocess.run(["tmux", "-L", SOCKET, "kill-server"], env=env, check=False)


if __name__ == "__main__":
    main()
