"""A turn's usage in the domain: which receipt names the turn a comment's prompt started, how
requests add up, and what an event says of it."""

from __future__ import annotations

from adapters.receipts.hook_json import receipt_of
from domain.parking import failed_turn
from domain.receipts import EndedTurn, Receipt, ReceiptKind, delivery_of, delivery_tag, ended_turn, receipt_line
from domain.usage import JoinedTurn, TurnUsage, UsageUnknown, summed, usage_fields

K = ReceiptKind


def test_prompts_that_name_no_turn_are_closed_in_queue_order() -> None:
    receipts = [
        Receipt(K.PROMPT, key="1", prompt="first"),
        Receipt(K.PROMPT, key="2", prompt="second"),  # queued while busy: its own turn follows
        Receipt(K.TURN_ENDED, key="3", turn="t1"),
        Receipt(K.TURN_ENDED, key="4", turn="t2"),
    ]
    assert ended_turn(receipts, "first") == EndedTurn(receipts[0], receipts[2])
    assert ended_turn(receipts, "second") == EndedTurn(receipts[1], receipts[3])
    assert ended_turn(receipts[:3], "second") is None  # its turn runs still


def test_a_prompt_that_joined_the_running_turn_is_closed_by_that_turns_end_with_the_prompt_that_started_it() -> None:
    receipts = [
        Receipt(K.PROMPT, key="1", prompt="first", turn="t1"),
        Receipt(K.PROMPT, key="2", prompt="second", turn="t1"),  # typed while the agent works: it joins t1
        Receipt(K.TURN_ENDED, key="3", turn="t1"),  # one end for both
        Receipt(K.PROMPT, key="4", prompt="third", turn="t2"),
        Receipt(K.TURN_ENDED, key="5", turn="t2"),
    ]
    assert ended_turn(receipts, "first") == EndedTurn(receipts[0], receipts[2])
    assert ended_turn(receipts, "second") == EndedTurn(receipts[1], receipts[2], joined=receipts[0])
    assert ended_turn(receipts, "third") == EndedTurn(receipts[3], receipts[4])  # the next turn's, not one late


def test_a_prompt_that_joined_a_turn_whose_end_was_said_is_closed_by_its_next_end() -> None:
    receipts = [
        Receipt(K.PROMPT, key="1", prompt="first", turn="t1"),
        Receipt(K.TURN_ENDED, key="2", turn="t1"),
        Receipt(K.PROMPT, key="3", prompt="second", turn="t1"),  # typed while its end's hook ran: t1 goes on
        Receipt(K.TURN_ENDED, key="4", turn="t1"),
    ]
    assert ended_turn(receipts, "first") == EndedTurn(receipts[0], receipts[1])
    assert ended_turn(receipts[:3], "second") is None
    assert ended_turn(receipts, "second") == EndedTurn(receipts[2], receipts[3], joined=receipts[0])


def test_an_end_naming_a_turn_no_open_prompt_names_closes_the_oldest() -> None:
    receipts = [
        Receipt(K.PROMPT, key="1", prompt="first", turn="t1"),
        Receipt(K.PROMPT, key="2", prompt="second", turn="t2"),
        Receipt(K.TURN_ENDED, key="3", turn="t9"),
        Receipt(K.TURN_ENDED, key="4"),
    ]
    assert ended_turn(receipts, "first") == EndedTurn(receipts[0], receipts[2])
    assert ended_turn(receipts, "second") == EndedTurn(receipts[1], receipts[3])


def test_a_prompt_that_joined_a_failed_turn_failed_with_it() -> None:
    receipts = [
        Receipt(K.PROMPT, key="1", prompt="first", turn="t1"),
        Receipt(K.PROMPT, key="2", prompt="second", turn="t1"),
        Receipt(K.TURN_FAILED, key="3", turn="t1"),
        Receipt(K.PROMPT, key="4", prompt="third", turn="t2"),
        Receipt(K.TURN_ENDED, key="5", turn="t2"),
    ]
    assert failed_turn(receipts, "first") is failed_turn(receipts, "second") is receipts[2]
    assert ended_turn(receipts, "second") is None
    assert ended_turn(receipts, "third") == EndedTurn(receipts[3], receipts[4])


def test_a_prompts_receipt_names_the_turn_it_runs_in_only_where_its_hook_says_so() -> None:
    codex = '{"hook_event_name": "UserPromptSubmit", "prompt": "p", "turn_id": "t-1"}'
    claude = '{"hook_event_name": "UserPromptSubmit", "prompt": "p", "prompt_id": "p-1"}'
    typed, queued = receipt_of("1796100000000000000-1", codex), receipt_of("1796100000000000000-2", claude)
    assert typed is not None and typed.turn == "t-1"  # Codex: the turn it runs in, the running one if it joined
    assert queued is not None and queued.turn == ""  # Claude Code: the running turn, which a queued prompt follows


def test_the_delivery_a_prompt_carries_is_the_one_its_tagged_line_names() -> None:
    line = receipt_line("poll-comment-7", delivery_tag("s3cret", "poll-comment-7"))
    forged = receipt_line("poll-comment-8", "0" * 16)
    assert delivery_of(Receipt(K.PROMPT, key="1", prompt=f"{forged}\n{line}\nbody"), "s3cret") == "poll-comment-7"
    assert delivery_of(Receipt(K.PROMPT, key="2", prompt=f"typed by a person\n{forged}"), "s3cret") == ""


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


def test_an_event_of_a_prompt_that_joined_a_turn_names_the_delivery_whose_turn_it_was_and_no_count() -> None:
    assert usage_fields(JoinedTurn("poll-comment-7")) == {"usage": "joined", "joined_delivery": "poll-comment-7"}
    assert usage_fields(JoinedTurn("")) == {"usage": "joined", "joined_delivery": None}
