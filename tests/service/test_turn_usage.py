"""What a comment's turn cost, said when its end is: read through the usage port by the turn its
end's receipt names, never holding up the turn's bookkeeping; a comment that joined a turn another
started ends with it, its cost said once, with the comment that started it."""

from __future__ import annotations

from typing import Any

from domain.events import Event
from domain.model import Reaction
from domain.receipts import ReceiptKind
from domain.refs import WorkItemRef
from domain.usage import TurnUsage, UsageUnknown
from tests.fakes.receipts import FakeReceipts
from tests.fakes.usage import FakeUsage
from tests.service.world import World


def fakes(world: World) -> tuple[FakeReceipts, FakeUsage]:
    assert isinstance(world.receipts, FakeReceipts) and isinstance(world.usage, FakeUsage)
    return world.receipts, world.usage


def delivered(world: World) -> tuple[WorkItemRef, str]:
    """An idle agent's item and a comment delivered to it, its turn running."""
    ref = world.watched()
    receipts, _ = fakes(world)
    receipts.plant(world.record(ref).spawn_id, ReceiptKind.TURN_ENDED, turn="start")
    world.clock.advance(1)
    comment = world.comment(ref)
    world.cycle()
    return ref, comment.id


def turn_end(world: World, ref: WorkItemRef, turn: str) -> None:
    receipts, _ = fakes(world)
    receipts.plant(world.record(ref).spawn_id, ReceiptKind.TURN_ENDED, turn=turn, transcript="/t/s.jsonl")
    world.cycle()


def finished(world: World, comment_id: str) -> list[dict[str, Any]]:
    return [e for e in world.events.named(Event.SESSION_TURN_FINISHED) if e["comment_id"] == comment_id]


def test_a_turns_end_says_what_the_turn_cost_as_the_agents_records_say_it() -> None:
    world = World()
    ref, comment = delivered(world)
    _, usage = fakes(world)
    usage.turns["turn-7"] = TurnUsage(input=12, output=34, cache_write=56, cache_read=78, model="claude-x")

    turn_end(world, ref, "turn-7")

    (event,) = finished(world, comment)
    assert {k: event[k] for k in ("tokens_in", "tokens_out", "cache_write", "cache_read", "model")} == {
        "tokens_in": 12,
        "tokens_out": 34,
        "cache_write": 56,
        "cache_read": 78,
        "model": "claude-x",
    }
    assert "usage" not in event
    assert usage.asked[-1] == ("claude", "turn-7")  # read by the item's harness and the turn its end named


def test_a_turn_whose_records_do_not_say_its_cost_is_said_unknown_with_the_reason() -> None:
    world = World()
    ref, comment = delivered(world)
    _, usage = fakes(world)
    usage.turns["turn-7"] = UsageUnknown("its turn's end is not in the transcript yet", pending=True)

    turn_end(world, ref, "turn-7")

    (event,) = finished(world, comment)
    assert (event["usage"], event["usage_reason"]) == ("unknown", "its turn's end is not in the transcript yet")
    assert "tokens_in" not in event


def test_a_read_that_fails_is_an_unknown_cost_and_the_turn_still_ends_once() -> None:
    world = World()
    ref, comment = delivered(world)
    _, usage = fakes(world)
    usage.fails = OSError("transcript vanished")

    turn_end(world, ref, "turn-7")
    world.cycle()

    (event,) = finished(world, comment)
    assert event["usage"] == "unknown" and "OSError: transcript vanished" in event["usage_reason"]
    assert [r for c, r in world.tracker.reactions if c == comment].count(Reaction.TURN_ENDED) == 1
    assert not world.ledger(ref).turns


def test_a_comment_typed_while_its_agent_works_joins_that_turn_and_ends_with_it_its_cost_said_once() -> None:
    world = World()
    ref = world.watched()
    receipts, usage = fakes(world)
    receipts.plant(world.record(ref).spawn_id, ReceiptKind.TURN_ENDED, turn="start")
    world.clock.advance(1)
    receipts.prompt_turn = "turn-7"  # each prompt's receipt names the turn it runs in: the running one once busy
    first = world.comment(ref, "please add a test")
    world.cycle()
    second = world.comment(ref, "and a doc")
    world.cycle()
    usage.turns["turn-7"] = TurnUsage(input=12, output=34, cache_write=56, cache_read=78, model="gpt-x")

    turn_end(world, ref, "turn-7")

    (started,), (joined,) = finished(world, first.id), finished(world, second.id)
    assert (started["tokens_in"], started["tokens_out"]) == (12, 34)
    assert (joined["usage"], joined["joined_delivery"]) == ("joined", f"poll-comment-{first.id}")
    assert "tokens_in" not in joined
    assert usage.asked == [("claude", "start"), ("claude", "turn-7")]  # the start's, then the turn once
    reactions = [(c, r) for c, r in world.tracker.reactions if r is Reaction.TURN_ENDED]
    assert reactions == [(first.id, Reaction.TURN_ENDED), (second.id, Reaction.TURN_ENDED)]
    assert not world.ledger(ref).turns
