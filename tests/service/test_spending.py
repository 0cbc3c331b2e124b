"""What each comment's turn cost, kept in the store when its end is read, and budgets that hold an
item's comments once what they cover has spent its allowance: told once at 80% and once at 100%,
nothing more pasted, released by a raise or by the next period, shared by every host of one store."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from app.usecases.delivery.spending import RAISED, Spending, raised_value
from app.usecases.views.why import comment_story
from domain.events import Event
from domain.pricing import Price, PriceTable
from domain.receipts import ReceiptKind
from domain.refs import WorkItemRef
from domain.spending import Budget, Scope, TurnCost
from domain.usage import TurnUsage
from tests.fakes.receipts import FakeReceipts
from tests.fakes.usage import FakeUsage
from tests.service.world import World

# $1 a million input tokens, $2 output, $3 cache write, $0.5 cache read: a micro-dollar a token at most
PRICES = PriceTable.of({"claude-x*": Price(Decimal(1), Decimal(2), Decimal(3), Decimal("0.5"))}, dated="test")
# 1,000 in + 500 out + 0 + 2,000 read: 1,000 + 1,000 + 0 + 1,000 = 3,000 micro-dollars ($0.003), 3,500 tokens
TURN = TurnUsage(input=1000, output=500, cache_write=0, cache_read=2000, model="claude-x-1")
TURN_MICRO = 3000


def fakes(world: World) -> tuple[FakeReceipts, FakeUsage]:
    assert isinstance(world.receipts, FakeReceipts) and isinstance(world.usage, FakeUsage)
    return world.receipts, world.usage


def idle_agent(world: World, number: int = 1) -> WorkItemRef:
    """An item whose agent ended its start's turn (of unknown usage here), seen to end."""
    ref = world.watched(number)
    receipts, _ = fakes(world)
    receipts.plant(world.record(ref).spawn_id, ReceiptKind.TURN_ENDED, turn=f"start-{number}")
    world.clock.advance(1)
    world.cycle()
    return ref


def of_comments(world: World) -> list[TurnCost]:
    """The costs of comments' turns (not of the starts' prompts)."""
    return [cost for cost in world.store.costs() if not cost.comment_id.startswith("start-")]


def turn_ends(world: World, ref: WorkItemRef, turn: str, usage: TurnUsage = TURN) -> None:
    receipts, costs = fakes(world)
    costs.turns[turn] = usage
    receipts.plant(world.record(ref).spawn_id, ReceiptKind.TURN_ENDED, turn=turn, transcript="/t/s.jsonl")
    world.clock.advance(1)
    world.cycle()


def finished(world: World, comment_id: str) -> dict[str, Any]:
    (event,) = [e for e in world.events.named(Event.SESSION_TURN_FINISHED) if e["comment_id"] == comment_id]
    return event


def pasted(world: World, ref: WorkItemRef) -> int:
    return len(world.session(ref).received)


def budget_notices(world: World, ref: WorkItemRef) -> list[str]:
    return [body for item, body in world.tracker.posted if item == ref and "budget" in body]


def test_a_comments_turn_cost_is_kept_with_its_author_and_labels_and_said_in_money_estimated() -> None:
    world = World(prices=PRICES)
    ref = idle_agent(world)
    comment = world.comment(ref, author="Alice")
    world.cycle()

    turn_ends(world, ref, "turn-1")

    (kept,) = of_comments(world)
    assert (kept.item, kept.comment_id, kept.author, kept.harness) == (ref, comment.id, "alice", "claude")
    assert (kept.usage, kept.micro_dollars, kept.labels) == (TURN, TURN_MICRO, frozenset({"loop"}))
    assert finished(world, comment.id)["usd_estimated"] == 0.003


def test_a_model_without_a_price_is_kept_in_tokens_only_and_its_event_says_no_money() -> None:
    world = World(prices=PRICES)
    ref = idle_agent(world)
    comment = world.comment(ref)
    world.cycle()

    turn_ends(world, ref, "turn-1", TurnUsage(10, 20, 0, 0, model="unpriced-model"))

    (kept,) = of_comments(world)
    assert (kept.tokens, kept.micro_dollars) == (30, None)
    assert "usd_estimated" not in finished(world, comment.id)


def test_a_budget_reached_mid_burst_holds_the_rest_with_one_notice_at_80_and_one_at_100() -> None:
    # three turns of $0.003 each against $0.007: the second passes 80% (told), the third 100%
    world = World(prices=PRICES, budgets=(Budget(Scope.ITEM, micro_dollars=7000),))
    ref = idle_agent(world)
    for turn in ("turn-1", "turn-2"):
        world.comment(ref)
        world.cycle()
        turn_ends(world, ref, turn)
    assert [n for n in budget_notices(world, ref) if "80%" in n] != [] and pasted(world, ref) == 2
    world.comment(ref)
    world.cycle()
    turn_ends(world, ref, "turn-3")  # the turn under way was not stopped: its cost counts

    held = [world.comment(ref, f"and then {n}") for n in range(3)]
    for _ in range(4):
        world.clock.advance(30)
        world.cycle()

    assert pasted(world, ref) == 3  # nothing more went in
    assert len(budget_notices(world, ref)) == 2  # 80% once, 100% once
    reached = budget_notices(world, ref)[-1]
    assert "`item` is spent" in reached and "$0.0090 of $0.0070" in reached
    assert len(of_comments(world)) == 3
    assert {p.comment.id for p in world.ledger(ref).pending} == {c.id for c in held}  # kept, not lost
    (event,) = world.events.named(Event.BUDGET_REACHED)
    assert (event["budget"], event["subject"], event["work_item"]) == ("item", "acme/widgets#1", str(ref))


def test_a_days_budget_spent_holds_every_item_it_covers_until_the_next_day() -> None:
    world = World(prices=PRICES, budgets=(Budget(Scope.DAY, tokens=3500),))
    first, second = idle_agent(world, 1), idle_agent(world, 2)
    world.comment(first)
    world.cycle()
    turn_ends(world, first, "turn-1")  # 3,500 tokens: the day's allowance, all of it
    waiting = world.comment(second)
    world.cycle()
    assert pasted(world, second) == 0 and len(budget_notices(world, second)) == 1

    world.clock.advance(24 * 3600)  # past midnight UTC: a new day's allowance
    world.cycle()

    assert pasted(world, second) == 1
    assert waiting.id not in {p.comment.id for p in world.ledger(second).pending}


def test_an_authors_budget_holds_that_authors_comments_only() -> None:
    budget = Budget(Scope.AUTHOR, match="alice", micro_dollars=TURN_MICRO)
    world = World(prices=PRICES, budgets=(budget,), authorized=("alice", "bob"))
    ref = idle_agent(world)
    world.comment(ref, author="alice")
    world.cycle()
    turn_ends(world, ref, "turn-1")

    world.comment(ref, "from alice again", author="alice")
    world.cycle()
    assert pasted(world, ref) == 1
    world.comment(ref, "from bob", author="bob")
    world.cycle()
    assert pasted(world, ref) == 1  # in order: bob's waits behind alice's held comment


def test_a_raised_allowance_lets_the_held_comments_go() -> None:
    world = World(prices=PRICES, budgets=(Budget(Scope.ITEM, micro_dollars=TURN_MICRO),))
    ref = idle_agent(world)
    world.comment(ref)
    world.cycle()
    turn_ends(world, ref, "turn-1")
    world.comment(ref, "one more")
    world.cycle()
    assert pasted(world, ref) == 1

    world.store.save_meta(f"{RAISED}item", raised_value(micro_dollars=10 * TURN_MICRO, tokens=None))
    world.cycle()

    assert pasted(world, ref) == 2


def test_two_hosts_of_one_store_hold_to_one_budget() -> None:
    shared = World(prices=PRICES, budgets=(Budget(Scope.REPOSITORY, micro_dollars=TURN_MICRO),))
    ref = idle_agent(shared)
    item = shared.tracker.work_items(ref.repo, "loop")[0]
    other_host = Spending(
        store=shared.store, prices=PRICES, budgets=shared.budgets, clock=shared.clock,
        events=shared.events, notify=lambda *_a, **_k: None,
    )  # fmt: skip
    assert other_host.holding(item) is None
    shared.comment(ref)
    shared.cycle()

    turn_ends(shared, ref, "turn-1")  # spent on this host

    held = other_host.holding(item)
    assert held is not None and held.spent.micro_dollars == TURN_MICRO


def test_why_tells_a_delivered_comments_turn_cost_and_a_turn_of_unknown_usage() -> None:
    world = World(prices=PRICES)
    ref = idle_agent(world)
    priced = world.comment(ref)
    world.cycle()
    turn_ends(world, ref, "turn-1")
    unknown = world.comment(ref, "and another")
    world.cycle()
    receipts, _ = fakes(world)
    receipts.plant(world.record(ref).spawn_id, ReceiptKind.TURN_ENDED, turn="turn-2", transcript="/t/s.jsonl")
    world.cycle()  # FakeUsage knows no turn-2: its usage is unknown

    told, untold = (comment_story(world.store, c.id, item=ref, records=world.events.records) for c in (priced, unknown))

    assert told is not None and untold is not None
    assert told.cost_line == (
        "its turn cost: 1,000 in, 500 out, 0 cache write, 2,000 cache read (claude-x-1): $0.0030 estimated"
    )
    assert told.as_json()["cost"]["usd_estimated"] == 0.003
    assert untold.cost_line is not None and "unknown" in untold.cost_line
    assert untold.as_json()["cost"] == {"usage": "unknown"}


def test_the_status_reply_carries_the_items_running_total() -> None:
    world = World(prices=PRICES)
    ref = idle_agent(world)
    world.comment(ref)
    world.cycle()
    turn_ends(world, ref, "turn-1")
    world.comment(ref, "the-loop status")

    world.cycle()

    (reply,) = [body for item, body in world.tracker.posted if item == ref and "status of" in body]
    assert "- Spent: $0.0030 estimated (2 turns, 3,500 tokens, 1 of unknown usage)\n" in reply  # the start's


def test_the_status_reply_says_nothing_is_recorded_before_a_turn_ends_and_unknown_usage_as_such() -> None:
    world = World(prices=PRICES)
    ref = world.watched()  # its start's turn runs
    world.comment(ref, "the-loop status")
    world.cycle()
    receipts, _ = fakes(world)
    receipts.plant(world.record(ref).spawn_id, ReceiptKind.TURN_ENDED, turn="start-1")  # usage unknown
    world.cycle()
    world.comment(ref, "the-loop status")

    world.cycle()

    first, second = [body for item, body in world.tracker.posted if item == ref and "status of" in body]
    assert "- Spent: nothing recorded yet\n" in first
    assert "- Spent: 1 turn, usage unknown\n" in second


def test_a_spent_days_budget_holds_the_start_of_a_newly_labelled_item_too() -> None:
    world = World(prices=PRICES, budgets=(Budget(Scope.DAY, tokens=3500),))
    first = idle_agent(world, 1)
    world.comment(first)
    world.cycle()
    turn_ends(world, first, "turn-1")  # the day's allowance, all of it
    spawned = world.spawns()

    world.watched(2)  # labelled now: its agent would start with the item's text as its prompt
    world.cycle()

    assert world.spawns() == spawned and world.ledger(WorkItemRef(first.repo, 2)).start is not None
    world.clock.advance(24 * 3600)
    world.cycle()
    assert world.spawns() == spawned + 1
