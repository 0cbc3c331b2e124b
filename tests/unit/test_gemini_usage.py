"""Gemini CLI's usage of one turn, read from session record lines in the shape the pinned binary
writes (tests/gemini/test_gemini_usage_facts.py), trimmed to the fields that matter and a few beside them."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from adapters.harnesses.gemini.usage import of_prompt, usage
from domain.receipts import EndedTurn, Receipt, ReceiptKind
from domain.usage import TurnUsage, UsageUnknown

MODEL = "gemini-3.1-pro-preview"
PROMPT = "Delivery: d-1 (receipt 0123)\n\nrun true"
SESSION = "5679e3f4-c81f-477f-857f-839c30b914ec"


def tokens(fresh_and_cached: int, cached: int, output: int, thoughts: int = 0) -> dict[str, int]:
    total = fresh_and_cached + output + thoughts
    return {
        "input": fresh_and_cached,
        "output": output,
        "cached": cached,
        "thoughts": thoughts,
        "tool": 0,
        "total": total,
    }


def user(number: int, text: str) -> dict[str, Any]:
    return {
        "id": f"user-{number}",
        "timestamp": "2026-12-07T06:57:55.488Z",
        "type": "user",
        "content": [{"text": text}],
    }


def result(number: int) -> dict[str, Any]:
    """A tool's result, sent to the model as the user's."""
    response = {"id": f"call-{number}", "name": "run_shell_command", "response": {"output": "Output: (empty)"}}
    return {"id": f"result-{number}", "type": "user", "content": [{"functionResponse": response}]}


def gemini(number: int, counts: dict[str, int] | None, content: str = "", **more: Any) -> dict[str, Any]:
    message = {"id": f"gemini-{number}", "type": "gemini", "content": content, "thoughts": [], "tokens": counts}
    return message | {"model": MODEL} | more


def calling(number: int, counts: dict[str, int]) -> dict[str, Any]:
    """A model request asking for a tool, as Gemini writes it again once the tool ran."""
    call = {"id": f"call-{number}", "name": "run_shell_command", "args": {"command": "true"}, "status": "success"}
    return gemini(number, counts, toolCalls=[call])


def update(**fields: Any) -> dict[str, Any]:
    return {"$set": fields}


CALL, ANSWER = tokens(500, 300, 33, 7), tokens(900, 800, 49, 11)
HEAD = [
    {"sessionId": SESSION, "projectHash": "a2b1", "startTime": "2026-12-07T06:57:54.533Z", "kind": "main"},
    update(messages=[user(0, "<session_context>\nThis is the Gemini CLI.</session_context>")]),
]
TURN = [
    user(1, PROMPT),
    update(lastUpdated="2026-12-07T06:57:55.488Z"),
    gemini(2, CALL),  # the request is written as it ends, its tool call added once the tool ran
    calling(2, CALL),
    result(3),
    gemini(4, ANSWER, "done"),
    update(lastUpdated="2026-12-07T06:57:56.440Z"),
]
SPENT = TurnUsage(input=300, output=100, cache_write=0, cache_read=1100, model=MODEL)


def test_a_turns_requests_are_summed_the_cached_tokens_out_of_the_input_the_thoughts_in_the_output() -> None:
    assert of_prompt([*HEAD, *TURN], PROMPT) == SPENT


def test_the_next_prompts_requests_are_not_the_turns() -> None:
    later = [user(5, "and again"), gemini(6, tokens(2000, 1000, 30), "again")]
    assert of_prompt([*HEAD, *TURN, *later], PROMPT) == SPENT
    assert of_prompt([*HEAD, *TURN, *later], "and again") == TurnUsage(1000, 30, 0, 1000, MODEL)


def test_a_turn_whose_request_after_its_tool_has_not_answered_yet_is_not_written_whole() -> None:
    found = of_prompt([*HEAD, *TURN[:5]], PROMPT)
    assert isinstance(found, UsageUnknown) and found.pending


def test_a_turn_cut_by_the_next_prompt_before_its_answer_is_unknown_for_good() -> None:
    found = of_prompt([*HEAD, *TURN[:5], user(5, "and again")], PROMPT)
    assert isinstance(found, UsageUnknown) and not found.pending


def test_a_prompt_not_in_the_record_is_not_there_yet() -> None:
    found = of_prompt(HEAD, PROMPT)
    assert isinstance(found, UsageUnknown) and found.pending


def test_a_prompt_whose_text_is_in_two_messages_is_unknown() -> None:
    again = [user(5, PROMPT), gemini(6, ANSWER, "done")]
    found = of_prompt([*HEAD, *TURN, *again], PROMPT)
    assert isinstance(found, UsageUnknown) and not found.pending


def test_a_message_written_again_replaces_the_first_in_its_place() -> None:
    written_again = [*TURN, update(lastUpdated="later"), gemini(4, tokens(901, 800, 49, 11), "done")]
    assert of_prompt([*HEAD, *written_again], PROMPT) == replace(SPENT, input=301)


def test_messages_set_whole_replace_every_message_before() -> None:
    kept = [user(1, PROMPT), calling(2, CALL), result(3), gemini(4, ANSWER, "done")]
    assert of_prompt([*HEAD, user(1, "an old prompt"), update(messages=kept)], PROMPT) == SPENT
    found = of_prompt([*HEAD, *TURN, update(messages=[user(0, "compressed")])], PROMPT)
    assert isinstance(found, UsageUnknown) and found.pending  # gone from the record


def test_a_rewind_drops_the_message_it_names_and_those_after() -> None:
    found = of_prompt([*HEAD, *TURN, {"$rewindTo": "user-1"}], PROMPT)
    assert isinstance(found, UsageUnknown) and found.pending
    rewound_later = [*TURN, user(5, "and again"), {"$rewindTo": "user-5"}]
    assert of_prompt([*HEAD, *rewound_later], PROMPT) == SPENT


@pytest.mark.parametrize(
    "changed",
    [
        gemini(4, None, "done"),  # no usage came with the request, or the message is no request
        gemini(4, {k: v for k, v in ANSWER.items() if k != "cached"}, "done"),
        gemini(4, ANSWER | {"thoughts": 1.5}, "done"),
        gemini(4, ANSWER | {"output": -1}, "done"),
        gemini(4, tokens(700, 800, 49), "done"),  # more cached than the whole input
        gemini(4, ANSWER | {"tool": 12}, "done"),  # tool-use prompt tokens: whether the input counts them is not pinned
        {"id": "info-4", "type": "info", "content": "Binary content received."},
    ],
    ids=["no tokens", "a count missing", "a count not whole", "a count negative", "cached over input", "tool", "info"],
)
def test_a_message_of_the_turn_of_a_shape_not_pinned_is_unknown(changed: dict[str, Any]) -> None:
    found = of_prompt([*HEAD, *TURN[:5], changed], PROMPT)
    assert isinstance(found, UsageUnknown) and not found.pending


def test_a_line_of_a_shape_not_pinned_is_unknown() -> None:
    found = of_prompt([*HEAD, {"$append": {"messages": []}}, *TURN], PROMPT)
    assert isinstance(found, UsageUnknown) and not found.pending


def write(path: Path, entries: list[dict[str, Any]], tail: str = "") -> Path:
    path.write_text("".join(json.dumps(entry) + "\n" for entry in entries) + tail, encoding="utf-8")
    return path


def ended(path: Path | str, prompt: str = PROMPT, *, ended_prompt: str | None = None) -> EndedTurn:
    """The prompt's BeforeAgent receipt and its turn's AfterAgent, both naming the record at `path`."""
    said = Receipt(ReceiptKind.PROMPT, key="1", conversation=SESSION, prompt=prompt, transcript=str(path))
    end = replace(said, kind=ReceiptKind.TURN_ENDED, key="2", prompt=prompt if ended_prompt is None else ended_prompt)
    return EndedTurn(said, end)


def test_the_reader_reads_the_record_its_turns_end_named(tmp_path: Path) -> None:
    assert usage(ended(write(tmp_path / "session.jsonl", [*HEAD, *TURN]))) == SPENT


def test_an_answer_still_being_written_is_not_written_whole(tmp_path: Path) -> None:
    half = json.dumps(TURN[5])[:30]  # no newline yet: the write is under way
    found = usage(ended(write(tmp_path / "session.jsonl", [*HEAD, *TURN[:5]], tail=half)))
    assert isinstance(found, UsageUnknown) and found.pending


def test_a_broken_line_of_the_record_is_unknown(tmp_path: Path) -> None:
    path = write(tmp_path / "session.jsonl", [*HEAD, *TURN])
    path.write_text("{not json\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    found = usage(ended(path))
    assert isinstance(found, UsageUnknown) and not found.pending


def test_an_end_naming_another_prompt_is_unknown(tmp_path: Path) -> None:
    found = usage(ended(write(tmp_path / "session.jsonl", [*HEAD, *TURN]), ended_prompt="and again"))
    assert isinstance(found, UsageUnknown) and not found.pending


def test_an_end_naming_no_record_or_a_prompt_with_no_text_is_unknown(tmp_path: Path) -> None:
    path = write(tmp_path / "session.jsonl", [*HEAD, *TURN])
    assert isinstance(usage(ended("")), UsageUnknown)
    assert isinstance(usage(ended(path, "")), UsageUnknown)
    assert isinstance(usage(ended(tmp_path)), UsageUnknown)  # a folder
    assert isinstance(usage(ended("relative.jsonl")), UsageUnknown)
