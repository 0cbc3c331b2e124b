"""Sessions by hand over fakes: list with probed state, reset (and its dry run), close, attach."""

from __future__ import annotations

import pytest

from app.usecases.views.sessions_admin import SessionsAdmin, UnknownWorkItem
from domain.events import Event
from domain.ledger import Resolution
from domain.model import ClosedBy, ItemState, Reaction, SessionState, SessionStatus
from domain.receipts import ReceiptKind
from domain.refs import WorkItemRef
from tests.fakes.receipts import FakeReceipts
from tests.fakes.tmux import FakeTmux
from tests.service.world import REPO, World


def _admin(world: World, **config: object) -> SessionsAdmin:
    return world.admin(**config)


def _fake(world: World) -> FakeTmux:
    assert isinstance(world.tmux, FakeTmux)
    return world.tmux


def test_listing_shows_each_record_with_what_tmux_says_now() -> None:
    world = World()
    live, exited = world.watched(1), world.watched(2)
    _fake(world).exit_harness(exited.target.name)

    views = _admin(world).listing()

    assert [(v.record.item, v.state) for v in views] == [(live, SessionState.LIVE), (exited, SessionState.DEAD)]


def test_listing_by_status_keeps_only_that_status() -> None:
    world = World()
    world.watched(1)
    closed = world.watched(2)
    _admin(world).close(closed, keep_tmux=True)

    views = _admin(world).listing(SessionStatus.CLOSED)

    assert [v.record.item for v in views] == [closed]


def test_a_reset_plan_changes_nothing() -> None:
    world = World()
    ref = world.watched()
    before = (world.store.session(ref), world.store.ledger(ref))

    plan = _admin(world).plan_reset([ref])

    assert [(p.item, p.state, p.ends_harness) for p in plan] == [(ref, SessionState.LIVE, True)]
    assert (world.store.session(ref), world.store.ledger(ref)) == before
    assert not _fake(world).sessions[ref.target.name].pane_dead
    assert Event.SESSION_RESET not in world.events.names()


def test_reset_ends_the_live_harness_and_forgets_record_and_ledger() -> None:
    world = World()
    ref = world.watched()
    admin = _admin(world)

    admin.reset(admin.plan_reset([ref])[0])

    assert (world.store.session(ref), world.store.ledger(ref)) == (None, None)
    assert _fake(world).sessions[ref.target.name].pane_dead
    (reset,) = world.events.named(Event.SESSION_RESET)
    assert (reset["source"], reset["work_item"], reset["harness_ended"]) == ("operator", str(ref), True)


def test_reset_ends_only_the_harness_pane_never_an_operators_window() -> None:
    world = World()
    ref = world.watched()
    _fake(world).open_window(ref.target.name)
    admin = _admin(world)

    admin.reset(admin.plan_reset([ref])[0])

    session = _fake(world).sessions[ref.target.name]
    assert (session.pane_dead, session.operator_dead) == (True, False)


def test_after_a_reset_the_next_cycle_is_first_sight_with_a_fresh_session() -> None:
    world = World()
    ref = world.watched()
    old = world.record(ref).harness_session_id
    world.comment(ref, "said before the reset")
    admin = _admin(world)
    admin.reset(admin.plan_reset([ref])[0])

    world.cycle()

    assert world.record(ref).harness_session_id != old
    assert world.events.names().count(Event.POLL_BASELINED) == 2
    assert all("said before the reset" not in text for text in _fake(world).sessions[ref.target.name].received)


def test_reset_is_the_remedy_for_a_first_spawn_refused_by_a_live_occupant() -> None:
    world = World()
    ref = world.item()
    _fake(world).add_session(ref.target.name)  # someone else's session holds the item's name
    world.cycle()  # first sight: ledger saved, spawn refused, no record
    admin = _admin(world)

    plan = admin.plan_reset([ref])[0]
    admin.reset(plan)

    # no record: nothing proves which pane is a harness, so the operator's remedy ends the session
    assert "kill the session loop-github-acme-widgets-1 (live), which the-loop has no record of" in plan.describe(
        done=False
    )
    assert ref.target.name not in _fake(world).sessions
    assert world.store.ledger(ref) is None


def test_reset_of_an_unknown_item_refuses_before_touching_any() -> None:
    world = World()
    known = world.watched()
    unknown = WorkItemRef(REPO, 99)
    calls = len(_fake(world).calls)

    with pytest.raises(UnknownWorkItem, match=r"unknown work item github:acme/widgets#99"):
        _admin(world).plan_reset([known, unknown])

    assert _fake(world).calls[calls:] == []
    assert world.store.session(known) is not None


def test_reset_all_plans_every_item_the_store_knows() -> None:
    world = World()
    refs = [world.watched(1), world.watched(2)]

    plan = _admin(world).plan_reset(None)

    assert [p.item for p in plan] == refs


def test_close_by_the_operator_closes_the_record_with_reason_operator() -> None:
    world = World()
    ref = world.watched()

    closed = _admin(world).close(ref, keep_tmux=False)

    assert closed and world.record(ref).status is SessionStatus.CLOSED
    assert ref.target.name not in _fake(world).sessions
    assert world.events.named(Event.SESSION_CLOSED)[0]["reason"] == "operator"


def test_closing_a_closed_session_again_changes_nothing() -> None:
    world = World()
    ref = world.watched()
    admin = _admin(world)
    admin.close(ref, keep_tmux=True)

    again = admin.close(ref, keep_tmux=None)

    assert not again and world.events.names().count(Event.SESSION_CLOSED) == 1


def test_attaching_to_a_closed_session_is_forced_read_only() -> None:
    world = World()
    ref = world.watched()
    admin = _admin(world)
    admin.close(ref, keep_tmux=True)

    admin.attach(admin.attachment(ref, read_only=False))

    assert [c.read_only for c in _fake(world).sessions[ref.target.name].clients] == [True]


def test_attaching_to_an_active_session_is_read_write_unless_asked() -> None:
    world = World()
    ref = world.watched()
    admin = _admin(world)

    admin.attach(admin.attachment(ref, read_only=False))

    assert [c.read_only for c in _fake(world).sessions[ref.target.name].clients] == [False]


def test_attaching_to_an_unknown_item_names_it() -> None:
    world = World()

    with pytest.raises(UnknownWorkItem, match="no session record"):
        _admin(world).attachment(WorkItemRef(REPO, 5), read_only=True)


def test_an_operators_close_holds_while_the_item_stays_labelled_until_reopened() -> None:
    world = World()
    ref = world.watched()
    admin = _admin(world)
    admin.close(ref, keep_tmux=True)
    held = world.comment(ref, "while closed")

    world.cycle()
    world.cycle()

    assert world.record(ref).status is SessionStatus.CLOSED and world.record(ref).closed_by is ClosedBy.OPERATOR
    assert world.ledger(ref).resolved[held.id].reason == "session-closed"
    spawned_before = world.spawns()
    assert admin.reopen(ref) and world.record(ref).status is SessionStatus.ACTIVE
    after = world.comment(ref, "after the reopen")

    world.cycle()

    assert world.ledger(ref).resolved[after.id].kind is Resolution.DELIVERED
    assert world.spawns() == spawned_before + 1  # the harness the close ended: resumed
    assert "while closed" not in "".join([*world.session(ref).received, world.session(ref).prompt])
    assert world.events.named(Event.SESSION_REOPENED)[0]["closed_by"] == "operator"


def test_a_session_closed_upstream_reopens_when_its_item_is_watched_again() -> None:
    world = World()
    ref = world.watched()
    world.tracker.set_state(ref, ItemState.CLOSED)
    world.cycle()
    world.tracker.set_state(ref, ItemState.OPEN)
    comment = world.comment(ref, "reopened upstream")

    world.cycle()

    assert world.record(ref).status is SessionStatus.ACTIVE
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED


def _closed_notices(world: World, ref: WorkItemRef) -> list[str]:
    return [body for item, body in world.tracker.posted if item == ref and "closed by the operator" in body]


def test_comments_to_an_item_the_operator_closed_get_one_notice_per_closed_period() -> None:
    world = World()
    ref = world.watched()
    admin = _admin(world)
    admin.close(ref, keep_tmux=True)
    first, second = world.comment(ref, "secret plan one"), world.comment(ref, "secret plan two")
    world.cycle()
    world.cycle()
    told_once = _closed_notices(world, ref)
    admin.reopen(ref)
    world.cycle()
    admin.close(ref, keep_tmux=True)
    third = world.comment(ref, "secret plan three")

    world.cycle()

    assert len(told_once) == 1 and len(_closed_notices(world, ref)) == 2
    assert all("secret plan" not in body for _, body in world.tracker.posted)
    assert all(str(c.id) in told for c, told in ((first, told_once[0]), (third, _closed_notices(world, ref)[1])))
    confused = [cid for cid, reaction in world.tracker.reactions if reaction is Reaction.FAILED]
    assert confused == [first.id, second.id, third.id]
    ledger = world.ledger(ref)
    assert [ledger.resolved[c.id].kind for c in (first, second, third)] == [Resolution.SKIPPED] * 3
    assert "secret plan" not in "".join([*world.session(ref).received, world.session(ref).prompt])


def test_a_closed_notice_that_could_not_be_posted_is_tried_again_with_the_next_comment() -> None:
    world = World()
    ref = world.watched()
    _admin(world).close(ref, keep_tmux=True)
    world.comment(ref, "one")
    world.tracker.fail_posts = True
    world.cycle()
    world.tracker.fail_posts = False
    later = world.comment(ref, "two")

    world.cycle()

    (told,) = _closed_notices(world, ref)
    assert f"comment {later.id}" in told and world.record(ref).closed_notice == later.id
    assert world.events.named(Event.NOTICE_FAILED)[0]["notice"] == "closed"


def test_one_items_view_asks_tmux_about_that_item_alone() -> None:
    world = World()
    wanted, other = world.watched(1), world.watched(2)
    _fake(world).exit_harness(other.target.name)
    asked_before = len(_fake(world).calls)

    view = _admin(world).view(wanted)

    assert (view.record.item, view.state) == (wanted, SessionState.LIVE)
    assert {name for _, name in _fake(world).calls[asked_before:]} == {wanted.target.name}
    with pytest.raises(UnknownWorkItem):
        _admin(world).view(WorkItemRef(REPO, 9))


def test_an_item_paused_or_stopped_before_any_spawn_is_listed_with_no_session() -> None:
    from app.cli.read_views import session_row
    from app.usecases.views.session_shown import shown_json, status_text
    from domain.model import SessionRecord, SpawnMode

    world = World(spawn_mode=SpawnMode.NEVER)  # items seen, no session spawned for any
    paused, stopped, plain = world.watched(2), world.watched(3), world.watched(4)
    world.comment(paused, "the-loop pause")
    world.comment(stopped, "the-loop stop")
    world.cycle()
    spawned = WorkItemRef(REPO, 1)
    world.store.save_session(SessionRecord(spawned, "claude", "c1", "/w"))
    assert world.store.session(paused) is None and world.store.session(stopped) is None
    admin = _admin(world)

    views = admin.listed()

    assert [(v.record.item, status_text(v)) for v in views] == [
        (spawned, "active"),
        (paused, "paused (control)"),
        (stopped, "stopped (control)"),
    ]  # in the order of their items, as sessions are; an item nothing holds and no session has is not listed
    assert plain not in [v.record.item for v in views]
    assert [v.record.item for v in admin.listed(SessionStatus.PAUSED)] == [paused]
    assert [v.record.item for v in admin.listed("stopped")] == [stopped]
    assert [v.record.item for v in admin.listed(SessionStatus.ACTIVE)] == [spawned]
    session, held = shown_json(views[0]), shown_json(views[1])
    assert list(held) == list(session)  # the same keys as a session's
    assert held["work_item"] == str(paused) and held["paused"] is True and held["stopped"] is False
    nulls = ("harness", "conversation_id", "target", "pane", "state", "harness_state", "status", "last_event")
    assert all(held[key] is None for key in nulls)
    row = session_row(views[2])
    assert row[0] == str(stopped) and "no session" in row and "stopped (control)" in row


def test_attaching_to_a_hibernated_item_whose_session_went_says_there_is_nothing_to_attach_to() -> None:
    world = World(hibernate_after_seconds=600.0)
    ref = world.watched()
    assert isinstance(world.receipts, FakeReceipts)
    world.receipts.plant(world.record(ref).spawn_id, ReceiptKind.TURN_ENDED)
    world.clock.advance(1)
    world.cycle()  # its turn seen to end: idle
    assert world.hibernation.hibernate(ref, after_seconds=0.0)

    attachment = _admin(world).attachment(ref, read_only=False)

    assert attachment.hibernated
    assert ref.target.name not in _fake(world).sessions
