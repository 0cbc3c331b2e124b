"""Parking on API limits, through the-loop's own poll cycle with the real Claude Code, offline: a 429 and a
529 park the item (zero attempts spent, one notice), and at the reset the agent gets the failed turn
again in one resume prompt, then the comment held meanwhile — nothing lost, nothing twice."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from adapters.clock import SystemClock
from domain.events import Event
from domain.ledger import Resolution
from domain.model import DeliveryId, Reaction
from domain.park import ParkCause
from domain.receipts import Receipt, ReceiptKind
from domain.refs import WorkItemRef
from tests.anthropic_standin.script import Fail, Say
from tests.anthropic_standin.server import AnthropicStandIn, Kind
from tests.claude.fixtures import anthropic, claude_binary, claude_config, claude_rig
from tests.claude.loop import ClaudeLoop
from tests.claude.rig import ClaudeRig
from tests.service.world import World
from tests.tmux_support import wait_for

__all__ = ["anthropic", "claude_binary", "claude_config", "claude_rig"]

pytestmark = pytest.mark.claude


CLAUDE_EXTRA_ENV = {"CLAUDE_CODE_MAX_RETRIES": "1"}  # a failure ends the turn after one retry


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


def receipts(world: World, ref: WorkItemRef) -> list[Receipt]:
    return world.receipts.read(ref, world.record(ref).spawn_id)  # type: ignore[union-attr]


def submitted(world: World, ref: WorkItemRef) -> list[str]:
    return [r.prompt for r in receipts(world, ref) if r.kind is ReceiptKind.PROMPT]


def turn_ends(world: World, ref: WorkItemRef) -> int:
    return sum(r.kind in {ReceiptKind.TURN_ENDED, ReceiptKind.TURN_FAILED} for r in receipts(world, ref))


def event_at(world: World, name: Event) -> datetime:
    found = world.events.named(name)[0]
    return datetime.fromtimestamp(found["at_ns"] / 1e9, UTC)


def park_and_resume(loop: ClaudeLoop, fresh: AnthropicStandIn, failure: Fail, number: int) -> dict[str, object]:
    """Spawn, one comment whose turn fails on `failure`, one comment held while parked, cycles until
    the reset passes; what happened, with the times of each step."""
    world = loop.world()
    ref = world.item(number)
    world.cycle()
    wait_for(lambda: turn_ends(world, ref) == 1, what="the spawn prompt's turn ended", timeout=30)
    fresh.reset(fallback=failure)
    first = world.comment(ref, "first: build the parser")
    world.cycle()
    wait_for(lambda: turn_ends(world, ref) == 2, what="the first comment's turn failed", timeout=60)
    fresh.reset(fallback=Say("done"))
    second = world.comment(ref, "second: and test it")
    world.cycle()  # sees the failed turn: parks, and holds the second comment
    parked = world.record(ref).park
    assert parked is not None and parked.until is not None
    pasted_while_parked = len(submitted(world, ref))
    world.cycle()
    assert len(submitted(world, ref)) == pasted_while_parked
    held = (world.ledger(ref).attempts(second.id), len(world.tracker.posted))
    while world.record(ref).park is not None and not world.record(ref).park.resuming:  # type: ignore[union-attr]
        time.sleep(1.0)
        world.cycle()
    wait_for(lambda: turn_ends(world, ref) == 4, what="the resume prompt's and the second comment's turns", timeout=60)
    world.cycle()
    failed_at = next(r.at for r in receipts(world, ref) if r.kind is ReceiptKind.TURN_FAILED)
    resume = next(r for r in receipts(world, ref) if r.kind is ReceiptKind.PROMPT and "Resuming" in r.prompt)
    times = {
        "failure (StopFailure hook)": failed_at,
        "parked (session.parked)": event_at(world, Event.SESSION_PARKED),
        "notice posted": event_at(world, Event.NOTICE_POSTED),
        "reset (park until)": parked.until,
        "unparked (session.unparked)": event_at(world, Event.SESSION_UNPARKED),
        "resume prompt submitted (UserPromptSubmit)": resume.at,
        "held comment confirmed (dispatch.succeeded)": datetime.fromtimestamp(
            next(e for e in world.events.named(Event.DISPATCH_SUCCEEDED) if e.get("comment_id") == second.id)["at_ns"]
            / 1e9,
            UTC,
        ),
    }
    result = {"world": world, "ref": ref, "first": first, "second": second, "parked": parked, "held": held}
    result["times"] = times
    result["prompts"] = submitted(world, ref)
    loop.end(world, ref)
    return result


def show_timeline(label: str, times: dict[str, datetime | None]) -> None:
    """Printed for docs/claude-code.md (`pytest -s`)."""
    start = times["failure (StopFailure hook)"]
    assert start is not None
    lines = [f"{label}:"] + [
        f"  {name}: {at:%H:%M:%S.%f}"[:-3] + f"  (+{(at - start).total_seconds():.2f} s)"
        for name, at in times.items()
        if at is not None
    ]
    print("\n".join(lines))


def check(run: dict[str, object], cause: ParkCause) -> None:
    world, ref = run["world"], run["ref"]
    assert isinstance(world, World) and isinstance(ref, WorkItemRef)
    first, second, parked = run["first"], run["second"], run["parked"]
    assert parked.cause is cause  # type: ignore[attr-defined]
    assert run["held"] == (0, 1)  # while parked: the held comment had no attempt; one notice
    reactions = [r for c, r in world.tracker.reactions if c == first.id]  # type: ignore[attr-defined]
    assert reactions[:3] == [Reaction.STARTED, Reaction.SUCCEEDED, Reaction.FAILED]
    assert world.ledger(ref).resolved[second.id].kind is Resolution.DELIVERED  # type: ignore[attr-defined]
    assert world.ledger(ref).resolved[second.id].attempts == 1  # type: ignore[attr-defined]
    prompts = run["prompts"]
    assert isinstance(prompts, list)
    first_line = f"Delivery: {DeliveryId.for_comment(first.id)} "  # type: ignore[attr-defined]
    resumes = [p for p in prompts if "[the-loop] Resuming" in p]
    assert len(resumes) == 1 and f"Failed delivery: {DeliveryId.for_comment(first.id)}" in resumes[0]  # type: ignore[attr-defined]
    assert "first: build the parser" in resumes[0]
    assert sum(first_line in p for p in prompts) == 1  # its own prompt once; then only the resume's restatement
    assert sum("second: and test it" in p for p in prompts) == 1
    assert prompts.index(resumes[0]) < next(i for i, p in enumerate(prompts) if "second: and test it" in p)
    assert len(world.events.named(Event.SESSION_PARKED)) == 1
    assert len(world.tracker.posted) == 1


def test_a_429_parks_claude_until_the_reset_it_names_then_resumes_with_nothing_lost_or_twice(
    loop: ClaudeLoop, fresh: AnthropicStandIn
) -> None:
    reset = (SystemClock().now() + timedelta(seconds=25)).replace(microsecond=0)
    message = f"rate limited; resets at {reset:%Y-%m-%dT%H:%M:%SZ}"
    run = park_and_resume(loop, fresh, Fail(429, "rate_limit_error", message, retry=False), 1)
    check(run, ParkCause.RATE_LIMIT)
    assert run["parked"].until == reset  # type: ignore[attr-defined]
    show_timeline("429 rate_limit", run["times"])  # type: ignore[arg-type]


def test_a_529_parks_claude_for_the_default_minute_then_resumes_with_nothing_lost_or_twice(
    loop: ClaudeLoop, fresh: AnthropicStandIn
) -> None:
    run = park_and_resume(loop, fresh, Fail(529, "overloaded_error", "overloaded", retry=True), 2)
    check(run, ParkCause.SERVER_ERROR)
    assert len([r for r in fresh.requests(Kind.TURN)]) >= 1
    show_timeline("529 overloaded", run["times"])  # type: ignore[arg-type]
