"""Faults: the clock jumping an hour (the ClockPort's now() moves back, or forward, as NTP
or an operator would set it), and the machine's clock behind the tracker's. Waits and deadlines
are measured on the clock that never jumps: no confirmation wait hangs for an hour, no readiness
deadline is misjudged, no comment is lost or delivered twice."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from domain.events import Event
from domain.ledger import Resolution
from domain.refs import WorkItemRef
from tests.fakes.clock import FakeClock
from tests.fakes.receipts import FakeReceipts
from tests.service.world import CLAUDE, CURSOR, REPO, World

HOUR = 3600.0


def _jump_at_the_first_sleep(world: World, seconds: float) -> None:
    """The wall clock is set `seconds` away while the cycle waits for the harness."""
    sleep, jumped = world.clock.sleep, []

    def once(wait: float) -> None:
        if not jumped:
            jumped.append(world.clock.jump(seconds))
        sleep(wait)

    world.clock.sleep = once  # type: ignore[method-assign]


def _slept_during(world: World, act: Callable[[], object]) -> float:
    before = len(world.clock.slept)
    act()
    return sum(world.clock.slept[before:])


def test_faults_the_clock_set_back_an_hour_mid_confirmation_never_makes_the_wait_an_hour() -> None:
    world = World()
    ref = world.watched()
    assert isinstance(world.receipts, FakeReceipts)
    world.receipts.ignore_pastes = True  # no receipt will come: the wait runs to its end
    world.comment(ref)
    _jump_at_the_first_sleep(world, -HOUR)

    slept = _slept_during(world, world.poll.run)

    assert slept <= CLAUDE.confirm_seconds + 1
    assert (
        world.events.named(Event.DISPATCH_UNCONFIRMED)[0]["reason"] == f"no receipt within {CLAUDE.confirm_seconds:g}s"
    )


def test_faults_the_clock_set_back_an_hour_never_makes_a_harness_without_receipts_young_again() -> None:
    world = World(harness="cursor")  # ready once alive `readySeconds` after its spawn
    github = _on_trackers_clock(world)
    ref = world.watched()
    world.clock.jump(-HOUR)
    comment = _said(world, github, ref, "said after the jump")

    slept = _slept_during(world, world.poll.run)

    assert slept <= CURSOR.ready_seconds + CURSOR.confirm_seconds  # not an hour waiting for it to "start"
    assert world.ledger(ref).resolved[comment].kind is Resolution.DELIVERED


def test_faults_the_clock_set_forward_an_hour_mid_resume_never_abandons_the_resumed_conversation() -> None:
    world = World()
    ref = world.watched()
    world.vanish(ref)
    comment = world.comment(ref)
    _jump_at_the_first_sleep(world, HOUR)  # while the resumed harness gets ready

    world.cycle()

    assert world.events.named(Event.SESSION_RESUME_FAILED) == []
    assert world.record(ref).harness_session_id == "sid-1"
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED


def _on_trackers_clock(world: World) -> FakeClock:
    """GitHub's clock, which does not jump when ours does."""
    github = FakeClock(world.clock.now())
    world.tracker.now = github.epoch
    return github


def _said(world: World, github: FakeClock, ref: WorkItemRef, body: str) -> str:
    return world.tracker.add_comment(ref, body, author="alice", created_at=github.advance(1)).id


def _cycle(world: World, github: FakeClock) -> None:
    world.cycle()
    github.advance(60)


def test_faults_comments_on_both_sides_of_a_jump_back_are_each_delivered_once() -> None:
    world = World()
    github = _on_trackers_clock(world)
    ref = world.item()
    _cycle(world, github)
    before = _said(world, github, ref, "before the jump")
    _cycle(world, github)
    world.clock.jump(-HOUR)
    after = [_said(world, github, ref, "just after the jump")]
    _cycle(world, github)
    after.append(_said(world, github, ref, "later"))
    _cycle(world, github)
    _cycle(world, github)

    ledger = world.ledger(ref)
    assert all(ledger.resolved[c].kind is Resolution.DELIVERED for c in [before, *after])
    bodies = ["before the jump", "just after the jump", "later"]
    assert [[b for b in bodies if b in prompt] for prompt in world.session(ref).received] == [[b] for b in bodies]


@pytest.mark.parametrize("skew", [HOUR, -HOUR], ids=["behind the tracker's", "ahead of the tracker's"])
def test_faults_a_machine_clock_an_hour_off_the_trackers_loses_and_repeats_nothing(skew: float) -> None:
    world = World()
    github = _on_trackers_clock(world)
    github.jump(skew)
    ref = world.item()
    _cycle(world, github)
    comments = [_said(world, github, ref, f"comment {n}") for n in range(3)]
    _cycle(world, github)
    _cycle(world, github)

    ledger = world.ledger(ref)
    assert all(ledger.resolved[c].kind is Resolution.DELIVERED for c in comments)
    assert len(world.session(ref).received) == 3


def test_faults_a_backoff_asked_for_a_minute_lasts_a_minute_when_the_clock_is_set_back_an_hour() -> None:
    world = World()
    github = _on_trackers_clock(world)
    ref = world.item()
    _cycle(world, github)
    world.tracker.rate_limited_until[REPO] = github.epoch() + 60
    world.cycle()  # told to wait a minute
    comment = _said(world, github, ref, "said while we wait")
    world.clock.jump(-HOUR)
    github.advance(61)

    world.cycle()

    assert world.ledger(ref).resolved[comment].kind is Resolution.DELIVERED
