"""The StateStore contract, run against the in-memory fake, the SQLite store and the PostgreSQL store alike."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from adapters.postgres.store import PostgresStateStore
from adapters.sqlite.store import SqliteStateStore
from domain.errors import StaleWrite
from domain.ledger import DeliveryState, Ledger, Pending, Resolution, Resolved, StartRequest, Turn
from domain.model import ClosedBy, Comment, CommentKind, SessionRecord, SessionStatus
from domain.park import FailedTurn, Park, ParkCause, ParkRule
from domain.ports import StateStore
from domain.refs import Naming, RepoRef, WorkItemRef
from domain.spending import Spent, TurnCost
from domain.usage import TurnUsage
from tests.contract.state_backends import (
    Backend,
    count_in_threads,
    count_in_two_processes,
    race_two_writers,
)
from tests.fakes.store import FakeStateStore

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
ITEM = WorkItemRef.parse("github:acme/widgets#7")
OTHER = WorkItemRef.parse("github:ghe.example:8443/acme/widgets#12")
REPO = RepoRef.parse("acme/widgets")


class Boom(Exception):
    pass


@pytest.fixture(params=["fake", "sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if request.param == "fake":
        fake = FakeStateStore()
        return Backend("fake", lambda: fake)
    if request.param == "postgres":
        dsn = request.getfixturevalue("postgres").new_schema()
        return Backend("postgres", lambda: PostgresStateStore(dsn), spec=f"postgres:{dsn}")
    path = tmp_path / "state" / "state.sqlite3"
    return Backend("sqlite", lambda: SqliteStateStore(path), spec=f"sqlite:{path}")


@pytest.fixture
def store(backend: Backend) -> Iterator[StateStore]:
    opened = backend.open()
    yield opened
    if isinstance(opened, SqliteStateStore | PostgresStateStore):
        opened.close()


def reopened(store: StateStore) -> StateStore:
    """The same store as a new process would see it (the fake has no second life)."""
    if isinstance(store, SqliteStateStore):
        store.close()
        return SqliteStateStore(store.path)
    if isinstance(store, PostgresStateStore):
        store.close()
        return PostgresStateStore(store.dsn)
    return store


def comment(cid: str, item: WorkItemRef = ITEM, *, body: str = "please fix", minutes: int = 0) -> Comment:
    return Comment(id=cid, item=item, author="alice", body=body, created_at=T0 + timedelta(minutes=minutes))


def full_ledger(item: WorkItemRef = ITEM) -> Ledger:
    hostile = "\x1b[201~ rm -rf / \r\n\x00 \ud800 ✓ 🎉 " + "x" * 5000
    review = Comment(
        id="r9", item=item, author=None, body=hostile, created_at=T0, url="https://x/r9",
        kind=CommentKind.REVIEW_COMMENT, path="src/a.py", line=42, edited=True, editor="bob",
    )  # fmt: skip
    return Ledger(
        item=item,
        baseline_at=T0,
        resolved={
            "1": Resolved(Resolution.BASELINED, T0),
            "2": Resolved(Resolution.DELIVERED, T0 + timedelta(seconds=1), attempts=2),
            "3": Resolved(Resolution.ABANDONED, T0, attempts=3, version="0.1.0", reason="tmux"),
            "4": Resolved(Resolution.SKIPPED, T0, reason="session-occupied"),
        },
        pending=(
            Pending(comment("6", item, minutes=2), attempts=1, state=DeliveryState.PASTED),
            Pending(review),
            Pending(comment("5", item), attempts=2, state=DeliveryState.UNCONFIRMED),
        ),
        abandoned={"3": comment("3", item, body=hostile)},
        armed_at=T0 - timedelta(minutes=5),
        start=StartRequest("control", T0, attempts=1, harness="codex", noticed=True),
        paused=True,
        stopped=True,
        turns=(Turn("2", CommentKind.ISSUE_COMMENT, "ab12"), Turn("r7", CommentKind.REVIEW_COMMENT, "ab12")),
        unrouted_noticed=True,
    )


def record(item: WorkItemRef = ITEM, **changes: Any) -> SessionRecord:
    base = SessionRecord(
        item=item, harness="claude", harness_session_id="4f6c-uuid",
        cwd="/home/op/src", status=SessionStatus.PAUSED,
        recent_delivery_ids=("poll-comment-2", "poll-comment-1"), pane_id="%12",
        created_at=T0, updated_at=T0 + timedelta(hours=1), last_event="dispatch.succeeded",
        spawn_id="0f" * 16, spawned_at=T0, spawned_monotonic=81234.567891, closed_by=ClosedBy.OPERATOR,
        blocked_notice="123-4", closed_notice="88", host="host-b", previous_host="host-a", naming=Naming.LEGACY,
        permission_mode="plan", workspace="api", hibernated_at=T0 + timedelta(hours=2),
        rss_bytes=734_003_200, hibernating="spawn-9",
    )  # fmt: skip
    return replace(base, **changes)


def test_a_saved_ledger_comes_back_equal_with_pending_order_and_hostile_text(
    store: StateStore,
) -> None:
    store.save_ledger(full_ledger())
    assert reopened(store).ledger(ITEM) == replace(full_ledger(), version=1)


def test_a_pruned_ledger_keeps_its_horizon_and_when_each_comment_was_written(
    store: StateStore,
) -> None:
    written = Resolved(Resolution.DELIVERED, T0 + timedelta(minutes=9), written=T0 + timedelta(minutes=8))
    pruned = replace(full_ledger(), resolved={"9": written}, horizon=T0 + timedelta(minutes=3))
    store.save_ledger(pruned)
    assert reopened(store).ledger(ITEM) == replace(pruned, version=1)


def test_a_ledger_never_saved_is_none(store: StateStore) -> None:
    assert store.ledger(ITEM) is None


def test_saving_a_ledger_again_replaces_it(store: StateStore) -> None:
    first = store.save_ledger(full_ledger())
    store.save_ledger(Ledger(item=ITEM, baseline_at=T0, version=first.version))
    assert reopened(store).ledger(ITEM) == Ledger(item=ITEM, baseline_at=T0, version=2)


def test_a_saved_session_record_comes_back_equal(store: StateStore) -> None:
    store.save_session(record())
    assert reopened(store).session(ITEM) == record(version=1)


def test_a_parked_session_record_comes_back_equal(store: StateStore) -> None:
    parked = Park(
        ParkCause.RATE_LIMIT, T0, T0 + timedelta(minutes=5),
        (FailedTurn("2", CommentKind.ISSUE_COMMENT), FailedTurn("r7", CommentKind.REVIEW_COMMENT)),
        wait_seconds=300.0, noticed=True, resumed_at=T0 + timedelta(minutes=6), detail="rate_limit",
        rule=ParkRule.NAMED_RESET, notice_id="1001",
    )  # fmt: skip
    store.save_session(record(park=parked))
    store.save_session(record(OTHER, park=replace(parked, until=None, cause=ParkCause.AUTHENTICATION)))
    assert reopened(store).session(ITEM) == record(park=parked, version=1)
    assert reopened(store).session(OTHER) == record(
        OTHER, park=replace(parked, until=None, cause=ParkCause.AUTHENTICATION), version=1
    )


def test_a_session_record_without_times_comes_back_equal(store: StateStore) -> None:
    store.save_session(record(created_at=None, updated_at=None, status=SessionStatus.CLOSED))
    expected = record(created_at=None, updated_at=None, status=SessionStatus.CLOSED, version=1)
    assert reopened(store).session(ITEM) == expected


def test_sessions_lists_every_record_in_item_order(store: StateStore) -> None:
    ninth, tenth = (
        WorkItemRef.parse("github:acme/widgets#9"),
        WorkItemRef.parse("github:acme/widgets#10"),
    )
    for item in (tenth, OTHER, ninth):
        store.save_session(record(item))
    assert [r.item for r in reopened(store).sessions()] == sorted([tenth, OTHER, ninth])


def test_items_lists_every_item_with_a_ledger_or_a_session_once(store: StateStore) -> None:
    third = WorkItemRef.parse("github:acme/widgets#3")
    store.save_ledger(full_ledger(ITEM))
    store.save_session(record(ITEM))
    store.save_session(record(OTHER))
    store.save_ledger(full_ledger(third))
    assert list(reopened(store).items()) == sorted([ITEM, OTHER, third])


def test_an_exception_inside_a_transaction_writes_nothing(store: StateStore) -> None:
    store.save_meta("kept", "yes")
    with pytest.raises(Boom), store.transaction():
        store.save_ledger(full_ledger())
        store.save_session(record())
        store.save_cursor(REPO, "etag-1")
        store.save_meta("kept", "no")
        raise Boom
    again = reopened(store)
    assert (again.ledger(ITEM), again.session(ITEM), again.cursor(REPO), dict(again.meta())) == (
        None, None, None, {"kept": "yes"},
    )  # fmt: skip


def test_the_writes_of_a_transaction_land_together(store: StateStore) -> None:
    with store.transaction():
        store.save_ledger(full_ledger())
        store.save_session(record())
    again = reopened(store)
    assert (again.ledger(ITEM), again.session(ITEM)) == (replace(full_ledger(), version=1), record(version=1))


def test_a_nested_transaction_joins_the_outer_one(store: StateStore) -> None:
    with pytest.raises(Boom), store.transaction():
        with store.transaction():
            store.save_session(record())
        raise Boom
    assert reopened(store).session(ITEM) is None


def test_a_failed_nested_transaction_undoes_only_its_own_writes(store: StateStore) -> None:
    with store.transaction():
        store.save_ledger(full_ledger())
        with pytest.raises(Boom), store.transaction():
            store.save_session(record())
            raise Boom
    again = reopened(store)
    assert (again.ledger(ITEM), again.session(ITEM)) == (replace(full_ledger(), version=1), None)


def test_reads_inside_a_transaction_see_its_writes(store: StateStore) -> None:
    with store.transaction():
        store.save_cursor(REPO, "etag-2")
        seen = store.cursor(REPO)
    assert seen == "etag-2"


def test_forget_drops_the_ledger_and_the_session_of_that_item_only(store: StateStore) -> None:
    for item in (ITEM, OTHER):
        store.save_ledger(full_ledger(item))
        store.save_session(record(item))
    store.forget(ITEM)
    again = reopened(store)
    assert (again.ledger(ITEM), again.session(ITEM), list(again.items())) == (None, None, [OTHER])


def test_forget_inside_a_failed_transaction_forgets_nothing(store: StateStore) -> None:
    store.save_ledger(full_ledger())
    store.save_session(record())
    with pytest.raises(Boom), store.transaction():
        store.forget(ITEM)
        raise Boom
    assert list(reopened(store).items()) == [ITEM]


def test_cursors_are_kept_per_repository_and_host(store: StateStore) -> None:
    store.save_cursor(REPO, "a")
    store.save_cursor(OTHER.repo, "b")
    again = reopened(store)
    unknown = RepoRef.parse("acme/other")
    assert (again.cursor(REPO), again.cursor(OTHER.repo), again.cursor(unknown)) == ("a", "b", None)


def test_saving_a_none_cursor_clears_it(store: StateStore) -> None:
    store.save_cursor(REPO, "a")
    store.save_cursor(REPO, None)
    assert reopened(store).cursor(REPO) is None


def test_meta_keeps_the_last_value_of_each_key(store: StateStore) -> None:
    store.save_meta("heartbeat", "1")
    store.save_meta("last_cycle", '{"items": 3}')
    store.save_meta("heartbeat", "2")
    assert dict(reopened(store).meta()) == {"heartbeat": "2", "last_cycle": '{"items": 3}'}


def test_the_first_save_is_version_one_and_every_save_one_more(store: StateStore) -> None:
    ledger = store.save_ledger(full_ledger())
    again = store.save_ledger(ledger)
    first_record = store.save_session(record())
    assert (ledger.version, again.version, first_record.version) == (1, 2, 1)
    reread = reopened(store)
    assert (reread.ledger(ITEM), reread.session(ITEM), reread.sessions()) == (again, first_record, [first_record])


def test_a_stale_ledger_write_is_refused_naming_the_item_and_both_versions_and_writes_nothing(
    store: StateStore,
) -> None:
    read = store.save_ledger(full_ledger())
    store.save_ledger(replace(read, pending=()))  # someone else saved it meanwhile: version 2

    with pytest.raises(StaleWrite, match=r"ledger of github:acme/widgets#7: read at version 1, it is at version 2"):
        store.save_ledger(replace(read, resolved={}))

    assert reopened(store).ledger(ITEM) == replace(full_ledger(), pending=(), version=2)


def test_a_stale_session_write_is_refused_naming_the_item_and_both_versions_and_writes_nothing(
    store: StateStore,
) -> None:
    read = store.save_session(record())
    store.save_session(replace(read, status=SessionStatus.CLOSED))

    with pytest.raises(StaleWrite) as refused:
        store.save_session(replace(read, status=SessionStatus.ACTIVE))

    assert (refused.value.item, refused.value.read, refused.value.stored) == (str(ITEM), 1, 2)
    assert reopened(store).session(ITEM) == record(status=SessionStatus.CLOSED, version=2)


def test_a_value_never_stored_cannot_overwrite_a_stored_row(store: StateStore) -> None:
    store.save_session(record())

    with pytest.raises(StaleWrite, match="read at version 0, it is at version 1"):
        store.save_session(record(harness="cursor"))

    assert reopened(store).session(ITEM) == record(version=1)


def test_a_forgotten_row_is_not_resurrected_by_a_save_of_what_was_read_before(store: StateStore) -> None:
    ledger, session = store.save_ledger(full_ledger()), store.save_session(record())
    store.forget(ITEM)

    with pytest.raises(StaleWrite, match="it is no longer stored"):
        store.save_ledger(ledger)
    with pytest.raises(StaleWrite, match="it is no longer stored"):
        store.save_session(session)

    assert list(reopened(store).items()) == []


def test_a_stale_write_inside_a_transaction_undoes_the_transactions_other_writes(store: StateStore) -> None:
    stale = store.save_session(record())
    store.save_session(stale)

    with pytest.raises(StaleWrite), store.transaction():
        store.save_ledger(full_ledger())
        store.save_cursor(REPO, "etag-3")
        store.save_session(stale)

    again = reopened(store)
    assert (again.ledger(ITEM), again.cursor(REPO), again.session(ITEM)) == (None, None, record(version=2))


def test_two_writers_racing_from_one_version_exactly_one_wins(
    backend: Backend, store: StateStore, tmp_path: Path
) -> None:
    store.save_ledger(Ledger(item=ITEM, baseline_at=T0))

    outcomes = race_two_writers(backend, store, ITEM, tmp_path)

    (winner,) = [o for o in outcomes if o.startswith("won")]
    assert sorted(outcomes) == ["stale", winner]
    minutes = int(winner.split()[1])
    assert reopened(store).ledger(ITEM) == Ledger(item=ITEM, baseline_at=T0 + timedelta(minutes=minutes), version=2)


def test_threads_sharing_one_store_never_interleave_transactions(store: StateStore) -> None:
    count_in_threads(store, threads=4, times=50)

    assert store.meta()["count"] == "200"


def test_two_processes_counting_in_transactions_lose_no_update(backend: Backend, store: StateStore) -> None:
    if not backend.spec:  # the fake lives in one process: its writers are threads
        count_in_threads(store, threads=2, times=400)
        codes = [0, 0]
    else:
        codes = count_in_two_processes(backend, times=400)

    assert (codes, reopened(store).meta()["count"]) == ([0, 0], "800")


def test_drop_session_removes_the_record_only_and_keeps_the_ledger(store: StateStore) -> None:
    store.save_ledger(full_ledger())
    saved = store.save_session(record())

    store.drop_session(saved)

    again = reopened(store)
    assert (again.session(ITEM), again.ledger(ITEM) is not None) == (None, True)


def test_a_stale_drop_session_is_refused_and_drops_nothing(store: StateStore) -> None:
    read = store.save_session(record())
    store.save_session(replace(read, last_event="moved on"))  # someone wrote it meanwhile

    with pytest.raises(StaleWrite):
        store.drop_session(read)

    assert reopened(store).session(ITEM) is not None


def test_the_inbox_keeps_comments_per_item_oldest_first_and_each_once(store: StateStore) -> None:
    late, early, other = comment("8", minutes=5), comment("9", minutes=1), comment("1", OTHER)
    store.inbox_add([late, early, other])
    store.inbox_add([late])  # read again (a crash before the cursor moved, a webhook redelivery)

    again = reopened(store)
    kept = (again.inbox(ITEM), again.inbox(OTHER), again.inbox_items())
    assert kept == ([early, late], [other], sorted([ITEM, OTHER]))


def test_a_taken_comment_leaves_the_inbox_and_hostile_text_survives_it(store: StateStore) -> None:
    hostile = comment("7", body="\x1b[201~ \x00 \ud800 🎉")
    store.inbox_add([hostile, comment("8")])

    store.inbox_remove(ITEM, ["8"])

    again = reopened(store)
    assert (again.inbox(ITEM), again.inbox(OTHER)) == ([hostile], [])


def test_the_inbox_index_lists_each_kept_comment_with_its_time_and_size(store: StateStore) -> None:
    small, large, other = comment("8", minutes=5), comment("9", body="x" * 5000), comment("1", OTHER)
    store.inbox_add([small, large, other])

    index = {(e.item, e.comment_id): e for e in reopened(store).inbox_index()}

    assert sorted(index) == sorted([(ITEM, "8"), (ITEM, "9"), (OTHER, "1")])
    assert index[(ITEM, "8")].created_at == small.created_at
    assert index[(ITEM, "9")].size >= 5000 > index[(ITEM, "8")].size > 0  # bytes, the text included


def test_the_inbox_index_counts_bytes_not_characters(store: StateStore) -> None:
    store.inbox_add([comment("8", body="🎉" * 1000)])  # 4 bytes each in UTF-8

    (entry,) = reopened(store).inbox_index()

    assert entry.size >= 4000


def test_an_inbox_write_inside_a_failed_transaction_keeps_nothing(store: StateStore) -> None:
    with pytest.raises(RuntimeError), store.transaction():
        store.inbox_add([comment("7")])
        store.save_cursor(REPO, "c-1")
        raise RuntimeError("crash between the read and the cursor")

    again = reopened(store)
    assert (again.inbox(ITEM), again.cursor(REPO)) == ([], None)


def cost(comment_id: str, item: WorkItemRef = ITEM, *, minutes: int = 0, **changes: Any) -> TurnCost:
    base = TurnCost(
        item=item,
        comment_id=comment_id,
        ended_at=T0 + timedelta(minutes=minutes),
        harness="claude",
        author="Alice",
        labels=frozenset({"loop", "bug"}),
        usage=TurnUsage(input=10, output=20, cache_write=30, cache_read=40, model="claude-sonnet-4-5"),
        micro_dollars=1234,
    )
    return replace(base, **changes)


def test_a_turns_cost_is_kept_once_and_read_back_whole(store: StateStore) -> None:
    first = cost("c1")
    assert store.record_cost(first) is True
    assert store.record_cost(replace(first, micro_dollars=9, harness="codex")) is False  # a second read, another host

    (kept,) = reopened(store).costs()
    assert kept == replace(first, author="alice")  # logins are kept casefolded


def test_a_turn_with_unknown_usage_or_no_price_is_kept_as_such(store: StateStore) -> None:
    store.record_cost(cost("unknown", usage=None, micro_dollars=None, labels=frozenset()))
    store.record_cost(cost("tokens-only", minutes=1, micro_dollars=None))

    unknown, tokens_only = store.costs()
    assert (unknown.usage, unknown.micro_dollars, unknown.labels) == (None, None, frozenset())
    assert tokens_only.usage is not None and tokens_only.micro_dollars is None
    assert store.spent() == {"acme/widgets": Spent(micro_dollars=0, tokens=100, turns=2, unknown=1, priced=0)}


def test_costs_are_read_from_a_time_on_and_for_one_item(store: StateStore) -> None:
    for at, (cid, item) in enumerate([("a", ITEM), ("b", OTHER), ("c", ITEM)]):
        store.record_cost(cost(cid, item, minutes=at * 60))

    assert [c.comment_id for c in store.costs()] == ["a", "b", "c"]
    assert [c.comment_id for c in store.costs(since=T0 + timedelta(minutes=60))] == ["b", "c"]
    assert [c.comment_id for c in store.costs(item=ITEM)] == ["a", "c"]
    assert store.costs(since=T0 + timedelta(days=1)) == []


def test_what_was_spent_is_summed_by_repository_for_an_item_repository_label_or_author(store: StateStore) -> None:
    elsewhere = WorkItemRef.parse("github:acme/gadgets#3")
    store.record_cost(cost("a"))
    store.record_cost(cost("b", OTHER, minutes=1, author="bob", labels=frozenset({"loop"})))
    store.record_cost(cost("c", elsewhere, minutes=2, micro_dollars=66))
    one = Spent(micro_dollars=1234, tokens=100, turns=1, priced=1)

    assert store.spent() == {"acme/widgets": one + one, "acme/gadgets": replace(one, micro_dollars=66)}
    assert store.spent(item=ITEM) == {"acme/widgets": one}
    assert store.spent(repo="acme/gadgets") == {"acme/gadgets": replace(one, micro_dollars=66)}
    assert store.spent(label="BUG") == {"acme/widgets": one, "acme/gadgets": replace(one, micro_dollars=66)}
    assert store.spent(label="bu") == {}  # a whole label, never a part of one
    assert store.spent(author="BOB") == {"acme/widgets": one}
    assert store.spent(since=T0 + timedelta(minutes=2)) == {"acme/gadgets": replace(one, micro_dollars=66)}


def test_a_mark_is_set_once(store: StateStore) -> None:
    assert store.mark_once("budget day 2025-03-01 warned acme/widgets#7", T0) is True
    assert reopened(store).mark_once("budget day 2025-03-01 warned acme/widgets#7", T0) is False


def test_marks_set_before_a_time_are_forgotten_when_a_mark_is_set(store: StateStore) -> None:
    store.mark_once("old", T0)
    store.mark_once("recent", T0 + timedelta(days=30))

    assert store.mark_once("new", T0 + timedelta(days=70), forget_before=T0 + timedelta(days=8)) is True

    assert store.mark_once("old", T0 + timedelta(days=70)) is True  # forgotten: set again
    assert store.mark_once("recent", T0 + timedelta(days=70)) is False  # kept
