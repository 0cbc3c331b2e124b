"""Found while aiming the kill campaign (bench/chaos): a daemon killed between resolving a comment
as abandoned (or skipped) and posting its notice left it resolved with no notice — silently lost.
The notice now goes first; a kill between the two posts it again on the next run (at least one)."""

from __future__ import annotations

from domain.ledger import Resolution
from tests.service.world import World


def test_a_kill_as_a_comment_is_abandoned_never_leaves_it_without_its_notice() -> None:
    world = World(max_retries=1)
    ref = world.watched()
    world.tmux.unresponsive_targets.add(ref.target.name)
    comment = world.comment(ref)
    world.crash_after("poll.comment_failed")

    world.cycle()

    assert world.ledger(ref).resolved[comment.id].kind is Resolution.ABANDONED
    assert [body.count(f"comment {comment.id}") for _ref, body in world.tracker.posted] == [1]


def test_a_kill_as_a_comment_is_skipped_never_leaves_it_without_its_notice() -> None:
    world = World()
    ref = world.watched()
    world.tmux.exit_harness(ref.target.name)
    world.tmux.kill_fails.add(ref.target.name)
    comment = world.comment(ref)
    world.crash_after("reaction.added")  # its 😕: after the ledger's write, before the notice

    world.cycle()

    assert world.ledger(ref).resolved[comment.id].kind is Resolution.SKIPPED
    assert [body.count(f"comment {comment.id}") for _ref, body in world.tracker.posted] == [1]
