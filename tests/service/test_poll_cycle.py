"""The poll cycle: reactions, concurrency, closing, and contained tracker failures."""

from __future__ import annotations

import threading
import time

from app.usecases.delivery.closing import CloseConfig
from domain.events import Event
from domain.model import ItemState, Reaction, SessionState, SessionStatus
from domain.refs import RepoRef, TmuxTarget
from tests.fakes.tmux import FakeTmux
from tests.service.world import REPO, World

OTHER = RepoRef.parse("acme/gadgets")


class SlowTmux(FakeTmux):
    """Counts deliveries in flight at once."""

    def __init__(self) -> None:
        super().__init__()
        self.in_flight = 0
        self.peak = 0
        self.per_target: dict[str, int] = {}
        self._lock = threading.Lock()

    def deliver(
        self, target: TmuxTarget, prompt: str, *, delivery_id: str, pane: str, mark: str, submit_delay_ms: int = 0
    ) -> None:
        with self._lock:
            self.in_flight += 1
            self.per_target[target.name] = self.per_target.get(target.name, 0) + 1
            assert self.per_target[target.name] == 1, "two deliveries into one item at once"
            self.peak = max(self.peak, self.in_flight)
        time.sleep(0.02)
        with self._lock:
            super().deliver(
                target, prompt, delivery_id=delivery_id, pane=pane, mark=mark, submit_delay_ms=submit_delay_ms
            )
            self.in_flight -= 1
            self.per_target[target.name] -= 1


def test_reactions_mark_start_and_success_on_the_comment() -> None:
    world = World()
    ref = world.watched()
    comment = world.comment(ref)

    world.cycle()

    assert world.tracker.reactions == [(comment.id, Reaction.STARTED), (comment.id, Reaction.SUCCEEDED)]


def test_a_failed_attempt_gets_the_failure_reaction_and_no_eyes_since_nothing_went_in() -> None:
    world = World()
    ref = world.watched()
    world.tmux.unresponsive_targets.add(ref.target.name)
    comment = world.comment(ref)

    world.cycle()

    assert world.tracker.reactions == [(comment.id, Reaction.FAILED)]


def test_a_failing_reaction_is_reported_and_changes_nothing_else() -> None:
    world = World()
    world.tracker.fail_reactions = True
    ref = world.watched()
    world.comment(ref)

    world.cycle()

    assert len(world.session(ref).received) == 1
    assert len(world.events.named(Event.REACTION_FAILED)) == 2


def test_items_are_worked_concurrently_up_to_the_limit_and_one_item_strictly_in_order() -> None:
    world = World(tmux=SlowTmux(), max_concurrent=2)
    refs = [world.item(n) for n in range(1, 6)]
    world.cycle()
    for ref in refs:
        world.comment(ref, "one")
        world.comment(ref, "two")

    world.cycle()

    tmux = world.tmux
    assert isinstance(tmux, SlowTmux)
    assert tmux.peak == 2
    assert all(["one" in r[-30:] for r in world.session(ref).received] == [True, False] for ref in refs)


def test_an_item_closed_upstream_is_closed_harness_terminated_session_kept() -> None:
    world = World()
    ref = world.watched()
    world.tracker.set_state(ref, ItemState.CLOSED)

    world.cycle()

    assert world.record(ref).status is SessionStatus.CLOSED
    assert world.tmux.session_state(ref.target) is SessionState.DEAD
    closed = world.events.named(Event.SESSION_CLOSED)[0]
    assert closed["reason"] == "closed" and closed["harness_terminated"] is True


def test_closing_honours_kill_harness_and_keep_session_settings() -> None:
    keep_all = World(close=CloseConfig(kill_harness_on_close=False, keep_session_on_close=True))
    kill_all = World(close=CloseConfig(kill_harness_on_close=True, keep_session_on_close=False))
    for world in (keep_all, kill_all):
        ref = world.watched()
        world.tracker.set_state(ref, ItemState.MERGED)
        world.cycle()

    assert keep_all.tmux.session_state(ref.target) is SessionState.LIVE
    assert kill_all.tmux.session_state(ref.target) is SessionState.ABSENT
    assert kill_all.events.named(Event.SESSION_CLOSED)[0]["tmux_killed"] is True


def test_an_item_that_lost_its_label_is_paused_and_its_session_retained() -> None:
    world = World()
    ref = world.watched()
    world.tracker.remove_label(ref, "loop")

    world.cycle()
    world.cycle()

    assert world.record(ref).status is SessionStatus.PAUSED
    assert world.tmux.session_state(ref.target) is SessionState.LIVE
    assert len(world.events.named(Event.SESSION_RETAINED)) == 1


def test_an_idle_cycle_asks_no_item_state_when_every_session_is_still_listed() -> None:
    world = World()
    world.watched(1)
    world.watched(2)
    before = world.tracker.requests

    world.cycle()

    assert world.tracker.requests - before == 2  # work_items + new_comments, nothing per item


def test_a_failing_repository_is_reported_and_the_others_carry_on() -> None:
    world = World(repos=(REPO, OTHER))
    good = world.watched(1, repo=OTHER)
    world.tracker.fail_reads.add(REPO)
    world.comment(good)

    summary = world.cycle()

    assert summary.sources_failed == 1
    assert world.events.named(Event.POLL_SOURCE_FAILED)[0]["repo"] == "acme/widgets"
    assert len(world.session(good).received) == 1


def test_a_rate_limited_repository_is_backed_off_until_allowed_again() -> None:
    world = World()
    ref = world.watched()
    world.tracker.rate_limited_until[REPO] = world.clock.epoch() + 90
    world.comment(ref)
    world.cycle()  # rate limited: backoff begins
    requests = world.tracker.requests
    world.poll.run()  # still inside the backoff window: not even asked

    assert world.tracker.requests == requests
    assert world.events.named(Event.POLL_BACKOFF)
    world.clock.advance(120)
    world.cycle()
    assert len(world.session(ref).received) == 1
