"""Comments pushed by webhook go through the same inbox and ledger as polled ones: sooner, never
twice, and only when new by the same rule."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from domain.events import Event
from domain.ledger import Resolution
from domain.model import Comment
from domain.webhook import Pushed
from tests.service.world import REPO, World


class _Intake:
    def __init__(self, world: World) -> None:
        self._intake = world.intake()

    def accept(self, comment: Comment) -> None:
        self._intake.accept(Pushed(comment, frozenset({"loop"})))  # GitHub says: labelled


def _intake(world: World) -> _Intake:
    return _Intake(world)


def test_a_pushed_comment_is_delivered_in_the_next_cycle_and_not_again_when_polled() -> None:
    world = World()
    ref = world.watched()
    comment = world.comment(ref, "pushed and polled")
    _intake(world).accept(comment)

    world.cycle()
    world.cycle()

    assert len(world.session(ref).received) == 1
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED


def test_a_pushed_comment_on_an_unlisted_item_is_not_delivered() -> None:
    world = World()
    ref = world.watched()
    stranger = replace(world.comment(ref), item=type(ref)(ref.repo, 99))
    _intake(world).accept(stranger)

    world.cycle()

    assert world.store.ledger(stranger.item) is None
    assert len(world.session(ref).received) == 1  # only the polled comment on the watched item


def test_a_redelivered_webhook_of_a_comment_from_before_the_item_was_armed_is_not_delivered() -> None:
    world = World()
    world.cycle()  # the repository's streams start here
    world.clock.advance(3600)
    ref = world.watched()  # labelled an hour later
    stale = world.tracker.add_comment(ref, "an old instruction", created_at=world.clock.now() - timedelta(hours=2))
    _intake(world).accept(stale)  # GitHub's "Redeliver" of an old signed delivery

    world.cycle()

    assert world.ledger(ref).resolved[stale.id].reason == "before-armed" and world.ledger(ref).pending == ()
    assert world.session(ref).received == [] and world.store.inbox(ref) == []
    (history,) = world.events.named(Event.POLL_COMMENT_HISTORY)  # not silently: the log says why
    assert (history["comment_id"], history["work_item"]) == (stale.id, str(ref))


def test_a_pushed_comment_survives_a_crash_before_the_next_cycle() -> None:
    world = World()
    ref = world.watched()
    comment = replace(world.comment(ref, "pushed only"), id="9001")  # never in the poll stream
    _intake(world).accept(comment)
    world.restart(version=world.version)  # a new process on the same store

    world.cycle()

    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED


def test_a_pushed_comment_is_delivered_before_the_cycle_reads_github_even_when_that_read_fails() -> None:
    # a load run found a webhook's comment waiting for the reads of every repository before
    # its own; its item was listed last cycle, so it goes first — and GitHub failing (rate limit,
    # an outage) does not hold up what GitHub itself pushed.
    world = World()
    ref = world.watched()
    world.cycle()  # listed, its session spawned
    comment = replace(world.comment(ref, "pushed while GitHub fails"), id="9002")
    _intake(world).accept(comment)
    world.tracker.fail_reads.add(REPO)

    summary = world.cycle()

    assert summary.sources_failed == 1
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    assert [c for c in world.session(ref).received if "pushed while GitHub fails" in c] != []
