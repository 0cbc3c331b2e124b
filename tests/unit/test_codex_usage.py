"""Codex's usage of one turn, read from rollout lines in the shape the pinned binary writes
(tests/codex/test_codex_usage_facts.py), trimmed to the fields that matter and a few beside them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from adapters.harnesses.codex.usage import of_turn, usage
from domain.receipts import EndedTurn, Receipt, ReceiptKind
from domain.usage import TurnUsage, UsageUnknown

TURN = "01a24ef2-d6e4-7de3-9655-0aa68e539776"
NEXT = "01a24ef2-d822-7250-bd21-919a3ef7f0cc"
THREAD = "01a24ef2-d64f-7fc3-8194-d96efa91e47f"


def tokens(fresh_and_cached: int, cached: int, output: int, reasoning: int = 0) -> dict[str, int]:
    return {
        "input_tokens": fresh_and_cached,
        "cached_input_tokens": cached,
        "cache_write_input_tokens": 0,
        "output_tokens": output,
        "reasoning_output_tokens": reasoning,
        "total_tokens": fresh_and_cached + output,
    }


def started(turn: str) -> dict[str, Any]:
    return {"type": "event_msg", "payload": {"type": "task_started", "turn_id": turn, "root_turn_id": turn}}


def context(turn: str, model: str = "gpt-standin") -> dict[str, Any]:
    return {"type": "turn_context", "payload": {"turn_id": turn, "root_turn_id": turn, "model": model, "cwd": "/w"}}


def record(turn: str, response: str, usage: dict[str, int], so_far: dict[str, int]) -> dict[str, Any]:
    payload = {
        "thread_id": THREAD,
        "turn_id": turn,
        "session_id": THREAD,
        "root_turn_id": turn,
        "response_id": response,
        "usage": usage,
        "turn_token_usage": so_far,
        "thread_token_usage": so_far,
    }
    return {"timestamp": "2026-12-07T05:21:07.500Z", "type": "token_usage_record", "payload": payload}


def token_count(last: dict[str, int]) -> dict[str, Any]:
    info = {"total_token_usage": last, "last_token_usage": last, "model_context_window": 258400}
    return {"type": "event_msg", "payload": {"type": "token_count", "info": info}}


def complete(turn: str) -> dict[str, Any]:
    return {"type": "event_msg", "payload": {"type": "task_complete", "turn_id": turn, "last_agent_message": "done"}}


CALL, ANSWER = tokens(500, 300, 40, 7), tokens(900, 800, 60, 11)
BOTH = tokens(1400, 1100, 100, 18)
RUNNING = [
    {"type": "session_meta", "payload": {"id": THREAD, "cli_version": "0.169.0"}},
    started(TURN),
    context(TURN),
    {"type": "response_item", "payload": {"type": "function_call", "name": "shell", "call_id": "call_1"}},
    record(TURN, "resp_1", CALL, CALL),
    token_count(CALL),
    record(TURN, "resp_2", ANSWER, BOTH),
    token_count(ANSWER),
]
SPENT = TurnUsage(input=300, output=100, cache_write=0, cache_read=1100, model="gpt-standin")


def test_a_turns_responses_are_summed_with_the_cached_tokens_taken_out_of_the_input() -> None:
    assert of_turn([*RUNNING, complete(TURN)], TURN) == SPENT


def test_the_next_turns_responses_are_not_the_turns() -> None:
    later = [started(NEXT), context(NEXT), record(NEXT, "resp_4", tokens(2000, 1000, 30), tokens(2000, 1000, 30))]
    rollout = [*RUNNING, complete(TURN), *later, complete(NEXT)]
    assert of_turn(rollout, TURN) == SPENT
    assert of_turn(rollout, NEXT) == TurnUsage(1000, 30, 0, 1000, "gpt-standin")


def test_a_rollout_as_it_stands_when_the_stop_hook_runs_is_not_ended_yet() -> None:
    found = of_turn(RUNNING, TURN)
    assert isinstance(found, UsageUnknown) and found.pending and "not in the rollout yet" in found.reason


def test_responses_that_do_not_add_up_to_the_turns_own_count_are_unknown() -> None:
    lost = [RUNNING[0], started(TURN), record(TURN, "resp_2", ANSWER, BOTH), complete(TURN)]  # resp_1 missing
    found = of_turn(lost, TURN)
    assert isinstance(found, UsageUnknown) and not found.pending and "turn_token_usage" in found.reason


def test_a_usage_without_one_of_its_counts_is_a_shape_not_known() -> None:
    partial = record(TURN, "resp_1", {k: v for k, v in CALL.items() if k != "cached_input_tokens"}, CALL)
    assert isinstance(of_turn([started(TURN), partial, complete(TURN)], TURN), UsageUnknown)


def test_a_cache_write_is_unknown_since_whether_the_input_counts_it_is_not_pinned() -> None:
    written = CALL | {"cache_write_input_tokens": 50}
    assert isinstance(
        of_turn([started(TURN), record(TURN, "resp_1", written, written), complete(TURN)], TURN), UsageUnknown
    )


def test_a_turn_with_no_record_is_unknown() -> None:
    found = of_turn([started(TURN), context(TURN), complete(TURN)], TURN)
    assert isinstance(found, UsageUnknown) and "no token_usage_record" in found.reason


def test_the_reader_reads_the_rollout_its_turns_end_named(tmp_path: Path) -> None:
    path = tmp_path / f"rollout-2026-12-07T05-21-07-{THREAD}.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in [*RUNNING, complete(TURN)]), encoding="utf-8")
    assert usage(ended(path, TURN)) == SPENT


def ended(path: Path, prompted: str, end: str = TURN) -> EndedTurn:
    """A prompt's receipt naming the turn `prompted`, paired with the end of turn `end`."""
    prompt = Receipt(ReceiptKind.PROMPT, key="1", prompt="run true", turn=prompted, transcript=str(path))
    return EndedTurn(prompt, Receipt(ReceiptKind.TURN_ENDED, key="2", turn=end, transcript=str(path)))


def test_a_prompt_paired_with_the_end_of_another_turn_is_unknown_whatever_that_turn_cost(tmp_path: Path) -> None:
    later = [started(NEXT), context(NEXT), record(NEXT, "resp_4", tokens(2000, 1000, 30), tokens(2000, 1000, 30))]
    path = tmp_path / f"rollout-2026-12-07T05-21-07-{THREAD}.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in [*RUNNING, complete(TURN), *later, complete(NEXT)]))
    found = usage(ended(path, TURN, end=NEXT))  # its own end never said: the next turn's closed it
    assert isinstance(found, UsageUnknown) and "other than the one its prompt ran in" in found.reason
