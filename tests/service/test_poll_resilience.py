"""A cycle that meets the unexpected carries on; nothing is lost, nothing lands in the wrong place."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.usecases.cycle.poll import PAUSED_CHECK_EVERY
from domain.events import Event
from domain.ledger import Resolution
from domain.model import ItemState, SessionRecord, SessionStatus, Source
from domain.refs import Naming, RepoRef, WorkItemRef
from tests.service.world import REPO, World


class Boom(Exception):
    pass


def test_two_labels_on_one_repository_both_get_their_comments() -> None:
    world = World()
    world.poll._watches = __import__("app.usecases.cycle.poll", fromlist=["watches"]).watches(
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
    assert world.events.named(Event.POLL_ITEM_FAILED)[0]["work_item"] == str(broken)
    assert len(world.session(fine).received) == 1
    assert world.ledger(broken).resolved[comment.id].kind is Resolution.DELIVERED


def test_an_error_reading_a_repository_never_stops_the_cycle() -> None:
    world = World()
    world.watched()
    world.tracker.work_items = lambda repo, label: (_ for _ in ()).throw(Boom("bad"))  # type: ignore[method-assign]

    summary = world.cycle()

    assert summary.sources_failed == 1
    assert "Boom: bad" in world.events.named(Event.POLL_SOURCE_FAILED)[0]["cause"]


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


def _two_repositories(world: World, first: RepoRef, second: RepoRef) -> tuple[WorkItemRef, WorkItemRef]:
    world.repos = (first, second)
    world.poll._watches = __import__("app.usecases.cycle.poll", fromlist=["watches"]).watches(
        [Source("github", first, "loop"), Source("github", second, "loop")]
    )
    return world.item(1, repo=first), world.item(1, repo=second)


def _watched_alone(world: World, repo: str) -> WorkItemRef:
    world.repos = (RepoRef.parse(repo),)
    world.poll._watches = __import__("app.usecases.cycle.poll", fromlist=["watches"]).watches(
        [Source("github", world.repos[0], "loop")]
    )
    return world.watched(1, repo=world.repos[0])


@pytest.mark.parametrize(("first", "second"), [("acme/foo.js", "acme/foo_js"), ("a/b-c", "a-b/c")])
def test_two_items_whose_old_names_coincide_both_get_a_session(first: str, second: str) -> None:
    world = World()
    one, other = _two_repositories(world, RepoRef.parse(first), RepoRef.parse(second))

    world.cycle()

    assert world.record(one).target != world.record(other).target
    assert not world.session(one).all_dead and not world.session(other).all_dead
    assert world.events.named(Event.SESSION_SPAWN_FAILED) == []


def _as_before_the_upgrade(world: World, item: WorkItemRef) -> SessionRecord:
    """The item's record and session as the previous version left them: the session bears the old name."""
    record = world.store.save_session(replace(world.record(item), naming=Naming.LEGACY))
    session = world.tmux.sessions.pop(item.target.name)
    session.name = record.target.name
    world.tmux.sessions[session.name] = session
    return record


def test_a_record_from_before_the_upgrade_keeps_its_live_session() -> None:
    world = World()
    dotted = _watched_alone(world, "acme/my.app")
    # as the previous version recorded it: its session bears the old name
    record = _as_before_the_upgrade(world, dotted)
    spawned = world.spawns()
    world.comment(dotted, "carry on")

    world.cycle()

    assert world.spawns() == spawned  # not orphaned: delivered into the session it has
    assert "carry on" in world.tmux.sessions[record.target.name].received[-1]


def test_an_item_named_like_a_record_from_before_the_upgrade_is_refused_with_a_remedy() -> None:
    world = World()
    dotted = _watched_alone(world, "acme/my.app")
    legacy = _as_before_the_upgrade(world, dotted)
    underscored = WorkItemRef.parse("github:acme/my_app#1")
    world.tracker.add_item(underscored, author="alice")
    world.poll._watches = __import__("app.usecases.cycle.poll", fromlist=["watches"]).watches(
        [Source("github", dotted.repo, "loop"), Source("github", underscored.repo, "loop")]
    )

    world.cycle()

    assert legacy.target == underscored.target
    assert world.store.session(underscored) is None
    failed = world.events.named(Event.SESSION_SPAWN_FAILED)[0]
    assert "recorded for another work item" in failed["reason"] and str(dotted) in failed["remedy"]


def test_the_remedy_applies_a_reset_of_the_old_record_lets_both_items_spawn() -> None:
    world = World()
    dotted = _watched_alone(world, "acme/my.app")
    _as_before_the_upgrade(world, dotted)
    underscored = WorkItemRef.parse("github:acme/my_app#1")
    world.tracker.add_item(underscored, author="alice")
    world.poll._watches = __import__("app.usecases.cycle.poll", fromlist=["watches"]).watches(
        [Source("github", dotted.repo, "loop"), Source("github", underscored.repo, "loop")]
    )
    world.cycle()  # refused: the old record holds the name
    admin = world.admin()

    admin.reset(admin.plan_reset([dotted])[0])  # what the refusal's remedy says
    world.cycle()

    assert world.record(dotted).target != world.record(underscored).target
    assert not world.session(dotted).all_dead and not world.session(underscored).all_dead


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
