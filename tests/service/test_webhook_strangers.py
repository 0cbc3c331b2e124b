"""A webhook delivery is kept, and wakes the poller, only when it can become a prompt or a
control verb; strangers neither fill the store nor spend GitHub requests, and a burst of kept
comments costs no more reads than one cycle per interval."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace

from app.usecases.cycle.cycle_summary import CycleSummary
from app.usecases.cycle.daemon import Daemon
from app.usecases.cycle.repo_read import RepoReader, Watch
from app.usecases.cycle.webhook import WebhookIntake
from domain.events import Event
from domain.model import Comment
from domain.refs import RepoRef, WorkItemRef
from domain.webhook import InboxLimits, Pushed
from tests.service.test_daemon import FakeLock
from tests.service.world import REPO, World


def _intake(world: World, limits: InboxLimits | None = None) -> WebhookIntake:
    return world.intake(limits)


def _push(intake: WebhookIntake, comment: Comment, labels: tuple[str, ...] = ()) -> None:
    intake.accept(Pushed(comment, frozenset(labels)))


def _wait_until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def _received(world: World, ref: WorkItemRef) -> list[str]:
    session = world.tmux.sessions.get(ref.target.name)
    return session.received if session is not None else []


@contextmanager
def _running(world: World, intake: WebhookIntake) -> Iterator[Daemon]:
    """The daemon in a thread, an hour between cycles: only a wake makes anything happen sooner."""
    daemon = Daemon(
        cycle=world.poll, uow=world.uow, lock=FakeLock(),
        interval_seconds=3600, version="1.0.0",
    )  # fmt: skip
    intake.notify = daemon.wake
    cycles = world.events.names().count(Event.POLL_CYCLE)
    runner = threading.Thread(target=daemon.run)
    runner.start()
    try:
        _wait_until(lambda: world.events.names().count(Event.POLL_CYCLE) > cycles)  # its first cycle
        yield daemon
    finally:
        daemon.stop()
        runner.join(timeout=30)
    assert not runner.is_alive()


def test_a_strangers_deliveries_on_an_unlabelled_issue_are_not_kept_and_cost_no_github_request() -> None:
    world = World()
    world.watched()  # a labelled item: the repository is read every cycle
    stranger = world.item(2, author="mallory", labels=())  # an unlabelled issue anyone can comment on
    intake = _intake(world)
    with _running(world, intake):
        requests = world.tracker.requests
        for n in range(40):
            note = Comment(str(5000 + n), stranger, "mallory", f"spam {n}", world.clock.now())
            _push(intake, note)
        time.sleep(0.5)  # a wake, had there been one, would have run a cycle by now

        assert world.tracker.requests == requests
    assert world.store.inbox_items() == []
    (dropped,) = world.events.named(Event.WEBHOOK_DROPPED)  # said once, with the count: not 40 lines
    assert (dropped["reason"], dropped["count"]) == ("unauthorized", 1)
    assert Event.WEBHOOK_RECEIVED not in world.events.names()


def test_an_authorized_comment_on_an_item_neither_listed_nor_labelled_is_dropped() -> None:
    world = World()
    world.watched()
    unlabelled = world.item(2, labels=())
    intake = _intake(world)

    _push(intake, Comment("6001", unlabelled, "alice", "hello", world.clock.now()))

    assert world.store.inbox_items() == []
    assert [e["reason"] for e in world.events.named(Event.WEBHOOK_DROPPED)] == ["not-listed"]


def test_a_comment_on_an_item_labelled_after_the_last_read_is_kept_and_delivered() -> None:
    # the label race the inbox exists for: GitHub says the item carries the watched label, the
    # listing of the last read does not have it yet
    world = World()
    world.watched()
    world.cycle()
    ref = world.item(2)  # labelled now, not listed until the next read
    intake = _intake(world)

    _push(intake, replace(world.comment(ref, "labelled just now"), id="9100"), labels=("loop",))
    world.cycle()

    assert world.store.inbox_items() == []
    assert any("labelled just now" in text for text in world.session(ref).received)


def test_a_burst_of_kept_comments_is_handled_without_a_read_of_every_repository() -> None:
    world = World()
    ref = world.watched()
    intake = _intake(world)
    burst = 20
    with _running(world, intake):
        cycles = world.events.names().count(Event.POLL_CYCLE)
        pushed = []
        for n in range(burst):
            comment = replace(world.comment(ref, f"kept {n}"), id=str(7000 + n))
            pushed.append(comment.id)
            _push(intake, comment, labels=("loop",))
            time.sleep(0.02)  # a burst over some time: each one a wake of its own
        _wait_until(lambda: world.store.inbox_items() == [])

        # an hour between cycles: no full read is due, and every kept item was listed
        assert world.events.names().count(Event.POLL_CYCLE) == cycles
    ledger = world.ledger(ref)
    assert all(c in ledger.resolved or c in {p.comment.id for p in ledger.pending} for c in pushed)


def test_drops_are_counted_and_said_at_most_once_a_minute_per_reason() -> None:
    world = World()
    world.watched()
    stranger = world.item(2, author="mallory", labels=())
    intake = _intake(world)

    for n in range(5):
        _push(intake, Comment(str(5100 + n), stranger, "mallory", "spam", world.clock.now()))
    world.clock.advance(61)
    _push(intake, Comment("5200", stranger, "mallory", "spam", world.clock.now()))

    assert [(e["reason"], e["count"]) for e in world.events.named(Event.WEBHOOK_DROPPED)] == [
        ("unauthorized", 1),
        ("unauthorized", 5),  # the four held back and this one
    ]


def test_a_delivery_past_the_inbox_limit_is_dropped_and_said() -> None:
    world = World()
    ref = world.watched()
    intake = _intake(world, InboxLimits(max_comments=2))

    for n in range(3):
        _push(intake, replace(world.comment(ref, f"kept {n}"), id=str(8000 + n)), labels=("loop",))

    assert sorted(e.comment_id for e in world.store.inbox_index()) == ["8000", "8001"]
    assert [(e["reason"], e["count"]) for e in world.events.named(Event.WEBHOOK_DROPPED)] == [("inbox-full", 1)]


def test_a_kept_comment_of_an_item_no_read_lists_is_pruned_once_it_is_older_than_the_window() -> None:
    world = World()
    world.watched()
    ref = world.item(2)  # labelled…
    intake = _intake(world)
    _push(intake, replace(world.comment(ref, "raced"), id="9200"), labels=("loop",))
    world.tracker.remove_label(ref, "loop")  # …and unlabelled again before any read listed it

    world.cycle()  # within the window: kept, the listing may lag behind GitHub's label
    kept = [e.comment_id for e in world.store.inbox_index()]
    world.clock.advance(600)
    world.cycle()

    assert kept == ["9200"]
    assert world.store.inbox_index() == []
    (pruned,) = world.events.named(Event.POLL_INBOX_PRUNED)
    assert (pruned["work_item"], pruned["comments"]) == (str(ref), 1)


def test_kept_comments_of_an_item_that_leaves_the_listing_are_pruned_at_the_next_read() -> None:
    world = World()
    world.watched()
    ref = world.watched(2)  # listed by the last read
    world.store.inbox_add([replace(world.comment(ref, "waiting"), id="9300")])  # not taken yet (no slot, a stop)
    world.tracker.remove_label(ref, "loop")
    reader = RepoReader(
        trackers={"github": world.tracker}, store=world.store, events=world.events, clock=world.clock,
        cluster=world.cluster,
    )  # fmt: skip

    reader.read(Watch("github", REPO, ("loop",)), [], CycleSummary(started_at=world.clock.now()), cycle=1)

    assert world.store.inbox_index() == []
    assert [e["work_item"] for e in world.events.named(Event.POLL_INBOX_PRUNED)] == [str(ref)]


def test_a_strangers_deliveries_leave_the_store_as_small_as_it_was() -> None:
    world = World()
    world.watched()
    stranger = world.item(2, author="mallory", labels=())
    intake = _intake(world)

    for n in range(300):
        _push(intake, Comment(str(10_000 + n), stranger, "mallory", "x" * 65_536, world.clock.now()))

    assert world.store.inbox_index() == []


def test_a_delivery_for_the_same_repository_on_another_github_host_is_dropped() -> None:
    world = World()
    ref = world.watched()
    elsewhere = WorkItemRef(RepoRef("ghe.example.com", REPO.owner, REPO.name), ref.number)
    intake = _intake(world)

    _push(intake, Comment("9400", elsewhere, "alice", "not this repository", world.clock.now()), labels=("loop",))

    assert world.store.inbox_index() == []
    assert [e["reason"] for e in world.events.named(Event.WEBHOOK_DROPPED)] == ["other-host"]


def test_a_kept_comment_whose_item_no_listing_has_yet_wakes_one_read_and_is_delivered() -> None:
    world = World()
    world.watched()
    intake = _intake(world)
    with _running(world, intake):
        cycles = world.events.names().count(Event.POLL_CYCLE)
        ref = world.item(2)  # labelled after the daemon's last read
        _push(intake, replace(world.comment(ref, "labelled, then asked"), id="9500"), labels=("loop",))
        _wait_until(lambda: any("labelled, then asked" in t for t in _received(world, ref)))
        # the item is worked beside that cycle (no wait holds the cycle): the cycle may be said just after
        _wait_until(lambda: world.events.names().count(Event.POLL_CYCLE) > cycles)

        assert world.events.names().count(Event.POLL_CYCLE) == cycles + 1  # the one read that lists it
