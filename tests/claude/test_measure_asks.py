"""Permission-request figures with the real Claude Code, offline (CI runs 2 rounds so the measurement
cannot rot; ASKS_MEASURE_RUNS=12 for the figures, which take minutes): a permission request →
its comment posted, by the daemon's pause
(the scan between cycles); an answer comment → the tool ran, through a webhook's wake and through
the poll cycle that reads it. The tracker is the in-memory fake: GitHub's own latency is not in
these figures. Each figure is printed, and written to $ASKS_MEASURE_OUT when set; nothing
here asserts a duration."""

from __future__ import annotations

import json
import os
import statistics
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.usecases.cycle.daemon import Daemon
from domain.asks import open_ask
from domain.events import Event
from domain.webhook import Pushed
from tests.anthropic_standin.script import Say, UseTool
from tests.anthropic_standin.server import AnthropicStandIn
from tests.claude.fixtures import anthropic, claude_binary, claude_config, claude_rig
from tests.claude.loop import ClaudeLoop, answerable, claude_spec
from tests.claude.rig import ClaudeRig
from tests.tmux_support import wait_for

__all__ = ["anthropic", "claude_binary", "claude_config", "claude_rig"]

pytestmark = pytest.mark.claude

# alternately answered through the webhook's wake and through a poll cycle
RUNS = int(os.environ.get("ASKS_MEASURE_RUNS", "2"))


class _Lock:
    def acquire(self, info: dict[str, Any]) -> None: ...
    def note(self, info: dict[str, Any]) -> None: ...
    def release(self) -> None: ...


@pytest.fixture(scope="module")
def loop(claude_rig: ClaudeRig, tmp_path_factory: pytest.TempPathFactory) -> ClaudeLoop:
    return ClaudeLoop(claude_rig, tmp_path_factory.mktemp("loop"))


@pytest.fixture
def fresh(anthropic: AnthropicStandIn) -> Iterator[AnthropicStandIn]:
    anthropic.reset()
    try:
        yield anthropic
    finally:
        anthropic.release()


def _ns_of(key: str) -> int:
    return int(key.split("-", 1)[0])


def _figures(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {"n": len(ordered), "p50": round(statistics.median(ordered), 3), "p99": round(p99, 3), "max": ordered[-1]}


def test_measure_request_to_comment_and_answer_to_tool(loop: ClaudeLoop, fresh: AnthropicStandIn) -> None:
    posted: list[float] = []
    answered: dict[bool, list[float]] = {True: [], False: []}
    for run in range(RUNS):
        webhook = run % 2 == 0
        to_comment, to_tool = _one(loop, fresh, 100 + run, webhook=webhook)
        posted.append(to_comment)
        answered[webhook].append(to_tool)
    figures = {
        "request_to_comment_seconds": _figures(posted),
        "answer_to_tool_webhook_seconds": _figures(answered[True]),
        "answer_to_tool_poll_cycle_seconds": _figures(answered[False]),
    }
    print(json.dumps(figures, indent=2))
    out = os.environ.get("ASKS_MEASURE_OUT")
    if out:
        Path(out).write_text(json.dumps(figures, indent=2), encoding="utf-8")
    assert len(posted) == RUNS


def _one(loop: ClaudeLoop, fresh: AnthropicStandIn, number: int, *, webhook: bool) -> tuple[float, float]:
    """One item whose Claude asks to run a tool: seconds from its request to the comment, and from
    the answer comment to the tool having run."""
    fresh.reset()
    fresh.script(UseTool(), Say("tool done"))
    world = loop.world(claude_spec(loop.rig.binary, permissionMode="default"), ask_wait_seconds=120)
    ref = world.item(number)
    daemon = Daemon(
        cycle=world.poll,
        uow=world.uow,
        lock=_Lock(),
        interval_seconds=3600,
        version="1.0.0",
        asks=world.asks.sweep,
    )
    intake = world.intake()
    intake.notify = daemon.wake
    runner = threading.Thread(target=daemon.run)
    runner.start()  # its first cycle spawns Claude; the request comes during its pause
    try:
        asked = wait_for(lambda: world.events.named(Event.SESSION_ASKED), timeout=60, what="the request posted")
        ask = open_ask(world.watch.receipts(world.record(ref)))
        assert ask is not None
        to_comment = (int(asked[0]["at_ns"]) - _ns_of(ask.key)) / 1e9
        if not webhook:
            daemon.stop()
            runner.join(timeout=60)
            world.poll.stopping = lambda: False  # the stopped daemon's flag: this cycle is ours
        answerable(world, ref)  # a bare answer counts only when written after its request was posted
        comment = world.comment(ref, "the-loop allow")
        start = time.time_ns()
        if webhook:
            intake.accept(Pushed(comment, frozenset({"loop"})))
        else:
            world.cycle()
        ran = loop.wait_hook(world, ref, "PostToolUse", timeout=60)
        assert (Path(world.record(ref).cwd) / "x").exists()
        return to_comment, (_ns_of(_key_of(loop, world, ref, ran)) - start) / 1e9
    finally:
        daemon.stop()
        runner.join(timeout=60)
        loop.end(world, ref)


def _key_of(loop: ClaudeLoop, world: Any, ref: Any, hook: dict[str, Any]) -> str:
    """The receipt file name (its `date +%s%N`) of `hook`."""
    folder = loop.base / "receipts" / ref.slug / world.record(ref).spawn_id
    for path in sorted(folder.glob("*.receipt")):
        if json.loads(path.read_text(encoding="utf-8")) == hook:
            return str(path.name.removesuffix(".receipt"))
    raise AssertionError("no receipt file for that hook")
