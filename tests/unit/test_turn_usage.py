"""A turn's usage in the domain: which receipt names the turn a comment's prompt started, how
requests add up, and what an event says of it."""

from __future__ import annotations

from adapters.receipts.hook_json import receipt_of
from domain.receipts import EndedTurn, Receipt, ReceiptKind, ended_turn
from domain.usage import TurnUsage, UsageUnknown, summed, usage_fields

K = ReceiptKind


def test_a_comments_turn_is_named_by_the_end_that_closes_its_prompt_in_queue_order() -> None:
    receipts = [
        Receipt(K.PROMPT, key="1", prompt="first", turn="t1"),
        Receipt(K.PROMPT, key="2", prompt="second", turn="t1"),  # queued: its hook names the running turn
        Receipt(K.TURN_ENDED, key="3", turn="t1"),
        Receipt(K.TURN_ENDED, key="4", turn="t2"),
    ]
    assert ended_turn(receipts, "first") == EndedTurn(receipts[0], receipts[2])
    assert ended_turn(receipts, "second") == EndedTurn(receipts[1], receipts[3])
    assert ended_turn(receipts[:3], "second") is None  # its turn runs still


def test_a_stop_hook_names_its_turn_and_transcript_as_claude_code_and_codex_say_them() -> None:
    claude = '{"hook_event_name": "Stop", "prompt_id": "p-1", "transcript_path": "/h/.claude/projects/x/s.jsonl"}'
    codex = '{"hook_event_name": "Stop", "turn_id": "t-1", "transcript_path": "/h/.codex/sessions/r.jsonl"}'
    stop, ended = receipt_of("1796100000000000000-1", claude), receipt_of("1796100000000000000-2", codex)
    assert stop is not None and (stop.kind, stop.turn, stop.transcript) == (
        K.TURN_ENDED,
        "p-1",
        "/h/.claude/projects/x/s.jsonl",
    )
    assert ended is not None and (ended.turn, ended.transcript) == ("t-1", "/h/.codex/sessions/r.jsonl")


def test_requests_add_up_and_name_each_model_once_in_the_order_they_first_answered() -> None:
    requests = [TurnUsage(1, 2, 3, 4, "a"), TurnUsage(10, 20, 30, 40, "b"), TurnUsage(100, 200, 300, 400, "a")]
    assert summed(requests) == TurnUsage(111, 222, 333, 444, "a, b")
    assert summed([]) is None


def test_an_event_says_the_four_counts_and_the_model_or_that_the_usage_is_unknown_and_why() -> None:
    assert usage_fields(TurnUsage(1, 2, 3, 4, "m")) == {
        "tokens_in": 1,
        "tokens_out": 2,
        "cache_write": 3,
        "cache_read": 4,
        "model": "m",
    }
    assert usage_fields(UsageUnknown("not yet")) == {"usage": "unknown", "usage_reason": "not yet"}
