"""Comments pushed by webhook go through the same ledger as polled ones: sooner, never twice."""

from __future__ import annotations

from dataclasses import replace

from domain.ledger import Resolution
from tests.service.world import World


def test_a_pushed_comment_is_delivered_in_the_next_cycle_and_not_again_when_polled() -> None:
    world = World()
    ref = world.watched()
    comment = world.comment(ref, "pushed and polled")
    world.poll.inbox.push(comment)

    world.cycle()
    world.cycle()

    assert len(world.session(ref).received) == 1
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED


def test_a_pushed_comment_on_an_unwatched_item_is_not_delivered() -> None:
    world = World()
    ref = world.watched()
    stranger = replace(world.comment(ref), item=type(ref)(ref.repo, 99))
    world.poll.inbox.push(stranger)

    world.cycle()

    assert world.store.ledger(stranger.item) is None
    assert len(world.session(ref).received) == 1  # only the polled comment on the watched item
