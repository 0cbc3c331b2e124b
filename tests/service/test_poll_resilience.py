"""A cycle that meets the unexpected carries on; nothing is lost, nothing lands in the wrong place."""

from __future__ import annotations

import pytest

from app.usecases.poll import PAUSED_CHECK_EVERY
from domain.ledger import Resolution
from domain.model import ItemState, SessionStatus, Source
from domain.refs import WorkItemRef
from tests.service.world import REPO, World


class Boom(Exception):
    pass


def test_two_labels_on_one_repository_both_get_their_comments() -> None:
    world = World()
    world.poll = world._poll()
    world.poll._watches = __import__("app.usecases.poll", fromlist=["watches"]).watches(
        [Source("github", REPO, "loop"), Source("github", REPO, "agent")]
    )
    first = world.item(1, labels=("loop",))
    second = world.item(2, labels=("agent",))
    world.cycle()
    world.comment(first, "for the first")
    world.comment(second, "for the second")

    world.cycle()

    assert len(world.session(first).received) == 1 and len(world.session(second).received) == 1
    assert world.record(first).status is SessionStatus.ACTIVE
    assert world.record(second).status is SessionStatus.ACTIVE


def test_an_unexpected_error_in_one_item_is_contained_and_its_comment_is_not_lost() -> None:
    world = World()
    broken, fine = world.watched(1), world.watched(2)
    comment = world.comment(broken)
    world.comment(fine)
    original = world.store.session

    def session(ref: WorkItemRef):  # type: ignore[no-untyped-def]
        if ref == broken:
            raise Boom("state read failed")
        return original(ref)

    world.store.session = session  # type: ignore[method-assign]
    summary = world.cycle()
    world.store.session = original  # type: ignore[method-assign]
    world.cycle()

    assert summary.items_failed == 1
    assert world.events.named("poll.item_failed")[0]["work_item"] == str(broken)
    assert len(world.session(fine).received) == 1
    assert world.ledger(broken).resolved[comment.id].kind is Resolution.DELIVERED


def test_an_error_reading_a_repository_never_stops_the_cycle() -> None:
    world = World()
    world.watched()
    world.tracker.work_items = lambda repo, label: (_ for _ in ()).throw(Boom("bad"))  # type: ignore[method-assign]

    summary = world.cycle()

    assert summary.sources_failed == 1
    assert "Boom: bad" in world.events.named("poll.source_failed")[0]["cause"]


def test_attempts_spent_by_crashes_abandon_the_comment_instead_of_crashing_forever() -> None:
    world = World(max_retries=2)
    ref = world.watched()
    comment = world.comment(ref)
    original = world.tmux.deliver
    world.tmux.deliver = lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt)  # type: ignore[method-assign]
    for _ in range(2):
        with pytest.raises(KeyboardInterrupt):
            world.cycle()
    world.tmux.deliver = original  # type: ignore[method-assign]

    world.cycle()

    assert world.ledger(ref).resolved[comment.id].kind is Resolution.ABANDONED
    assert len(world.tracker.posted) == 1
    assert world.session(ref).received == []


def test_a_second_item_whose_name_sanitises_to_a_recorded_target_is_refused() -> None:
    world = World()
    dotted = world.watched(1, repo=__import__("domain.refs", fromlist=["RepoRef"]).RepoRef.parse("acme/my.app"))
    world.repos = (dotted.repo,)
    underscored = WorkItemRef.parse("github:acme/my_app#1")
    world.tracker.add_item(underscored, author="alice")
    world.poll._watches = __import__("app.usecases.poll", fromlist=["watches"]).watches(
        [Source("github", dotted.repo, "loop"), Source("github", underscored.repo, "loop")]
    )

    world.cycle()

    assert dotted.target == underscored.target
    assert world.record(dotted).item == dotted
    assert world.store.session(underscored) is None
    assert "recorded for another work item" in world.events.named("session.spawn_failed")[0]["reason"]


def test_a_crash_right_after_a_spawn_leaves_a_record_the_next_comment_is_delivered_into() -> None:
    world = World()
    ref = world.item()
    original = world.events.emit

    def crash_on_spawned(event, **fields):  # type: ignore[no-untyped-def]
        if event.value == "session.spawned":
            raise Boom("killed")
        original(event, **fields)

    world.events.emit = crash_on_spawned  # type: ignore[method-assign]
    world.cycle()
    world.events.emit = original  # type: ignore[method-assign]
    world.comment(ref)

    world.cycle()

    assert len(world.session(ref).received) == 1
    assert world.spawns() == 1


def test_a_paused_session_whose_item_is_then_closed_is_closed_too() -> None:
    world = World()
    ref = world.watched()
    world.tracker.remove_label(ref, "loop")
    world.cycle()
    world.tracker.set_state(ref, ItemState.CLOSED)

    for _ in range(PAUSED_CHECK_EVERY):
        world.cycle()

    assert world.record(ref).status is SessionStatus.CLOSED


def test_a_relabelled_item_is_active_again_at_once() -> None:
    world = World()
    ref = world.watched()
    world.tracker.remove_label(ref, "loop")
    world.cycle()
    world.tracker.add_label(ref, "loop")

    world.cycle()

    assert world.record(ref).status is SessionStatus.ACTIVE
