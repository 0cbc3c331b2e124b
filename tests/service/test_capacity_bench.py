"""The capacity bench's short form (`python -m bench.capacity` over the fakes, small): 100 labelled
items on 5 slots with hibernation, a few hundred comments on random items — every comment delivered
exactly once, never more agents alive than the slots, agents hibernated and woken. No wall-clock
figure is asserted."""

from __future__ import annotations

import pytest

from bench.capacity import Agent, Run, Scenario, report, run

SMALL = Scenario(items=100, slots=5, hibernate_after=300.0, rate_per_hour=100.0, hours=2.0, turn_seconds=30.0, seed=7)


@pytest.fixture(scope="module")
def small() -> Run:
    return run(SMALL)


def test_every_comment_of_the_short_form_is_delivered_exactly_once(small: Run) -> None:
    assert small.sent >= 150, report(SMALL, small)
    assert (small.delivered_once, small.lost, small.duplicated) == (small.sent, 0, 0), report(SMALL, small)


def test_the_short_form_never_has_more_agents_alive_than_its_slots(small: Run) -> None:
    assert small.most_live == SMALL.slots, report(SMALL, small)


def test_the_short_form_hibernates_agents_and_wakes_them_for_their_comments(small: Run) -> None:
    # every item's agent started once through 5 slots: all but the last 5 gave theirs up
    assert small.hibernations >= SMALL.items - SMALL.slots and small.wakes > 0, report(SMALL, small)
    assert small.latency[Agent.HIBERNATED] and small.latency[Agent.AWAKE], report(SMALL, small)
