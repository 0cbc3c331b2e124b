"""Found while aiming the kill campaign (bench/chaos): a daemon killed between resolving a comment
as abandoned (or skipped) and posting its notice left it resolved with no notice — silently lost.
The notice now goes first; a kill between the two posts it again on the next run (at least one)."""

from __future__ import annotations

import contextlib

from domain.ledger import Resolution
from tests.service.world import World


def crash_after(world: World, event_name: str) -> None:
    """The daemon dies (a SIGKILL) right after `event_name` is emitted; the next run restarts it."""
    original = world.events.emit

    def emit(event, **fields):  # type: ignore[no-untyped-def]
        original(event, **fields)
        if event.value == event_name:
            raise KeyboardInterrupt

    world.events.emit = emit  # type: ignore[method-assign]
    with contextlib.suppress(KeyboardInterrupt):
        world.cycle()
    world.events.emit = original  # type: ignore[method-assign]
    world.restart(version=world.version)


def test_a_kill_as_a_comment_is_abandoned_never_leaves_it_without_its_notice() -> None:
    world = World(max_retries=1)
    ref = world.watched()
    world.tmux.unresponsive_targets.add(ref.target.name)
    comment = world.comment(ref)
    crash_after(world, "poll.comment_failed")

    world.cycle()

    assert world.ledger(ref).resolved[comment.id].kind is Resolution.ABANDONED
    assert [body.count(f"comment {comment.id}") for _ref, body in world.tracker.posted] == [1]


def test_a_kill_as_a_comment_is_skipped_never_leaves_it_without_its_notice() -> None:
    world = World()
    ref = world.watched()
    world.tmux.exit_harness(ref.target.name)
    world.tmux.kill_fails.add(ref.target.name)
    comment = world.comment(ref)
    crash_after(world, "reaction.added")  # its 😕: after the ledger's write, before the notice

    world.cycle()

    assert world.ledger(ref).resolved[comment.id].kind is Resolution.SKIPPED
    assert [body.count(f"comment {comment.id}") for _ref, body in world.tracker.posted] == [1]
