"""Claude Code's usage of one turn, read from transcript lines in the shape the pinned binary writes
(tests/claude/test_claude_usage_facts.py), trimmed to the fields that matter and a few beside them."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from adapters.agents.transcript import entries_from
from adapters.harnesses.claude.usage import of_prompt, usage
from domain.receipts import EndedTurn, Receipt, ReceiptKind
from domain.usage import TurnUsage, UsageUnknown

PROMPT = "fd2719bc-d7d4-4481-bb95-4b2d01c03c7e"
NEXT = "8ab35c5a-3d90-42e8-9e6c-c9e7f02674e4"
MODEL = "claude-standin"


def user(prompt_id: str, content: Any = "read notes") -> dict[str, Any]:
    return {
        "parentUuid": None,
        "isSidechain": False,
        "promptId": prompt_id,
        "type": "user",
        "message": {"role": "user", "content": content},
        "uuid": f"user-{prompt_id[:4]}",
        "turnPosition": {"promptIndex": 1, "turnIndex": 1},
    }


def assistant(request: str, block: int, tokens: tuple[int, int, int, int], content: dict[str, Any]) -> dict[str, Any]:
    fresh, output, written, read = tokens
    return {
        "parentUuid": "attachment-1",
        "isSidechain": False,
        "message": {
            "id": f"msg_{request}",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [content],
            "stop_reason": "tool_use" if content["type"] == "tool_use" else "end_turn",
            "usage": {
                "input_tokens": fresh,
                "cache_creation_input_tokens": written,
                "cache_read_input_tokens": read,
                "output_tokens": output,
                "output_tokens_details": {"thinking_tokens": 0},
                "service_tier": "standard",
                "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
            },
        },
        "apiBlockIndex": block,
        "requestRef": f"request-{request}",
        "requestedModel": "claude-opus-5-5",
        "type": "assistant",
        "uuid": f"assistant-{request}-{block}",
    }


def tool(n: int) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{n}", "name": "Read", "input": {"file_path": f"/work/{n}.txt"}}


def system(subtype: str) -> dict[str, Any]:
    return {"parentUuid": "assistant-2-0", "type": "system", "subtype": subtype, "uuid": f"system-{subtype}"}


TEXT = {"type": "text", "text": "read it"}
FIRST = (100, 20, 300, 4000)
SECOND = (5, 7, 11, 13)
TURN = [
    {"type": "mode", "mode": "normal"},
    user(PROMPT),
    {"parentUuid": f"user-{PROMPT[:4]}", "type": "attachment", "attachment": {"type": "prompt_snapshot"}},
    {"type": "api-request", "id": "request-1"},
    assistant("1", 0, FIRST, tool(1)),  # one request, two content blocks: two lines, one usage
    assistant("1", 1, FIRST, tool(2)),
    user(PROMPT, [{"tool_use_id": "toolu_1", "type": "tool_result", "content": "1\thello"}]),
    user(PROMPT, [{"tool_use_id": "toolu_2", "type": "tool_result", "content": "1\thello"}]),
    {"type": "api-request", "id": "request-2"},
    assistant("2", 0, SECOND, TEXT),
]
END = [system("stop_hook_summary"), system("turn_duration"), {"type": "cost-state", "totalCostUSD": 0.003}]
SPENT = TurnUsage(input=105, output=27, cache_write=311, cache_read=4013, model=MODEL)


def test_a_turns_requests_are_summed_each_once_however_many_lines_it_took() -> None:
    assert of_prompt([*TURN, *END], PROMPT) == SPENT


def test_the_next_prompts_requests_are_not_the_turns() -> None:
    later = [user(NEXT, "and again"), assistant("3", 0, (1000, 2000, 3000, 4000), TEXT), *END]
    assert of_prompt([*TURN, *END, *later], PROMPT) == SPENT
    assert of_prompt([*TURN, *END, *later], NEXT) == TurnUsage(1000, 2000, 3000, 4000, MODEL)


def test_a_transcript_as_it_stands_when_the_stop_hook_runs_is_not_ended_yet() -> None:
    found = of_prompt(TURN, PROMPT)  # the last request is written; its turn's end is not
    assert isinstance(found, UsageUnknown) and found.pending and "not in the transcript yet" in found.reason


def test_a_prompt_not_in_the_transcript_is_unknown() -> None:
    found = of_prompt([*TURN, *END], NEXT)
    assert isinstance(found, UsageUnknown) and "prompt is not in the transcript" in found.reason


def test_an_assistant_line_naming_no_request_reference_is_a_shape_not_known() -> None:
    older = assistant("2", 0, SECOND, TEXT)
    older["requestId"] = older.pop("requestRef")
    found = of_prompt([*TURN[:-1], older, *END], PROMPT)
    assert isinstance(found, UsageUnknown) and not found.pending and "requestRef" in found.reason


def test_a_usage_without_one_of_its_counts_is_a_shape_not_known() -> None:
    partial = assistant("2", 0, SECOND, TEXT)
    del partial["message"]["usage"]["cache_read_input_tokens"]
    found = of_prompt([*TURN[:-1], partial, *END], PROMPT)
    assert isinstance(found, UsageUnknown) and "cache_read_input_tokens" in found.reason


def test_a_count_that_is_not_a_whole_number_is_a_shape_not_known() -> None:
    odd = assistant("2", 0, SECOND, TEXT)
    odd["message"]["usage"]["output_tokens"] = "7"
    assert isinstance(of_prompt([*TURN[:-1], odd, *END], PROMPT), UsageUnknown)


def test_a_turn_that_ran_a_subagent_is_unknown() -> None:
    agent = {"type": "tool_use", "id": "toolu_9", "name": "Agent", "input": {"prompt": "look around"}}
    found = of_prompt([*TURN, assistant("3", 0, SECOND, agent), *END], PROMPT)
    assert isinstance(found, UsageUnknown) and "subagent" in found.reason


def end_of(path: Path, prompt_id: str = PROMPT) -> EndedTurn:
    """The prompt's receipt and its turn's end's (its Stop hook), naming the turn and the transcript."""
    prompt = Receipt(ReceiptKind.PROMPT, key="1", prompt="read notes", turn=prompt_id, transcript=str(path))
    return EndedTurn(prompt, Receipt(ReceiptKind.TURN_ENDED, key="2", turn=prompt_id, transcript=str(path)))


def write(path: Path, entries: list[dict[str, Any]], tail: str = "") -> Path:
    path.write_text("".join(json.dumps(entry) + "\n" for entry in entries) + tail, encoding="utf-8")
    return path


def test_the_reader_reads_the_transcript_its_turns_end_named(tmp_path: Path) -> None:
    assert usage(end_of(write(tmp_path / "t.jsonl", [*TURN, *END]))) == SPENT


def test_a_turns_end_still_being_written_is_not_ended_yet(tmp_path: Path) -> None:
    half = json.dumps(system("turn_duration"))[:20]  # no newline yet: the write is under way
    found = usage(end_of(write(tmp_path / "t.jsonl", [*TURN, system("stop_hook_summary")], tail=half)))
    assert isinstance(found, UsageUnknown) and found.pending and "not in the transcript yet" in found.reason


def test_a_broken_line_within_the_turn_is_unknown(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", TURN)
    path.write_text(path.read_text(encoding="utf-8") + "{not json\n" + json.dumps(END[1]) + "\n", encoding="utf-8")
    found = usage(end_of(path))
    assert isinstance(found, UsageUnknown) and not found.pending and "not JSON" in found.reason


def test_an_end_naming_no_turn_or_no_transcript_is_unknown(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", [*TURN, *END])
    assert isinstance(usage(end_of(path, prompt_id="")), UsageUnknown)
    nowhere = end_of(path)
    assert isinstance(usage(replace(nowhere, end=replace(nowhere.end, transcript=""))), UsageUnknown)


def test_a_transcript_path_that_is_no_file_is_unknown_and_read_no_further(tmp_path: Path) -> None:
    assert isinstance(usage(end_of(tmp_path)), UsageUnknown)  # a folder
    assert isinstance(usage(end_of(tmp_path / "gone.jsonl")), UsageUnknown)
    assert isinstance(usage(end_of(Path("relative.jsonl"))), UsageUnknown)


def test_only_the_lines_from_the_turns_first_on_are_read(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", [*TURN, *END])
    path.write_text("{an old broken line\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    entries = entries_from(str(path), PROMPT)
    assert not isinstance(entries, UsageUnknown) and entries[0]["promptId"] == PROMPT


def test_the_turn_read_is_the_one_its_end_names_not_its_prompt(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", [*TURN, *END, user(NEXT, "and again"), assistant("3", 0, SECOND, TEXT), *END])
    queued = end_of(path, NEXT)  # a prompt queued while busy names the running turn; its Stop, its own
    assert usage(replace(queued, prompt=replace(queued.prompt, turn=PROMPT))) == TurnUsage(5, 7, 11, 13, MODEL)
