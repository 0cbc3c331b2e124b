"""What one turn cost, as Claude Code's own transcript says it, pinned against the real binary and
the Anthropic stand-in serving known usage (adapters/harnesses/claude/usage.py reads it so)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from adapters.harnesses.claude.usage import usage
from adapters.receipts.hook_json import receipt_of
from domain.receipts import EndedTurn, Receipt
from domain.usage import TurnUsage, Usage, UsageUnknown
from tests.anthropic_standin.script import Busy, Say, UseTool, UseTools
from tests.anthropic_standin.script import Usage as Served
from tests.anthropic_standin.server import AnthropicStandIn
from tests.anthropic_standin.stream import MODEL
from tests.claude.fixtures import anthropic, claude, claude_binary, claude_config, claude_rig
from tests.claude.hooks import Hook
from tests.claude.rig import ClaudeRig, ClaudeSession
from tests.tmux_support import wait_for

__all__ = ["anthropic", "claude", "claude_binary", "claude_config", "claude_rig"]

pytestmark = pytest.mark.claude

READS = Served(input=100, output=20, cache_write=300, cache_read=4000)  # one request, two tool_use blocks
ANSWER = Served(input=5, output=7, cache_write=11, cache_read=13)
RUNNING = Served(input=1000, output=2000, cache_write=3000, cache_read=4000)
QUEUED = Served(input=21, output=22, cache_write=23, cache_read=24)


def spent(*served: Served) -> TurnUsage:
    return TurnUsage(
        input=sum(s.input for s in served),
        output=sum(s.output for s in served),
        cache_write=sum(s.cache_write for s in served),
        cache_read=sum(s.cache_read for s in served),
        model=MODEL,
    )


@dataclass(frozen=True, slots=True)
class Turns:
    """One Claude's three turns: two reads then an answer; a prompt that holds the model; one queued meanwhile."""

    session: ClaudeSession
    prompts: list[Hook]  # UserPromptSubmit, in order
    stops: list[Hook]  # Stop, in order
    requests: int  # the agent-loop requests the stand-in served

    @property
    def transcript(self) -> list[dict[str, Any]]:
        text = Path(self.stops[0]["transcript_path"]).read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines()]


def receipt(hook: Hook) -> Receipt:
    """A hook's JSON as the-loop's receipts read it."""
    found = receipt_of(str(hook.at_ns), json.dumps(hook.data))
    assert found is not None
    return found


def read_whole(prompt: Hook, stop: Hook) -> Usage:
    """The usage of the turn of `prompt` that `stop` ended, once its transcript holds the turn's end
    (it may lag the Stop hook)."""
    turn = EndedTurn(receipt(prompt), receipt(stop))
    wait_for(lambda: not isinstance(usage(turn), UsageUnknown), timeout=10, what="the turn in the transcript")
    return usage(turn)


@pytest.fixture(scope="module")
def turns(claude_rig: ClaudeRig, anthropic: AnthropicStandIn) -> Turns:
    anthropic.reset()
    folder = claude_rig.folder()
    for name in ("a.txt", "b.txt"):
        (folder / name).write_text("hello\n", encoding="utf-8")
    reads = tuple(UseTool(name="Read", input={"file_path": str(folder / name)}) for name in ("a.txt", "b.txt"))
    anthropic.script(UseTools(reads, usage=READS), Say("read both", usage=ANSWER))
    session = claude_rig.spawn(folder, prompt="read a and b")
    first = claude_rig.hooks.wait("Stop", session.session_id)
    anthropic.script(Busy(60, then=Say("held", usage=RUNNING)), Say("queued", usage=QUEUED))
    since = time.time_ns()
    claude_rig.paste(session, "keeps the model busy")
    running = claude_rig.hooks.wait("UserPromptSubmit", session.session_id, since_ns=since)
    wait_for(lambda: len(anthropic.turns()) == 3, what="the held request")
    claude_rig.paste(session, "arrives while busy")
    claude_rig.hooks.wait("UserPromptSubmit", session.session_id, since_ns=running.at_ns + 1)
    anthropic.release()
    wait_for(lambda: len(claude_rig.hooks.of("Stop", session.session_id, since_ns=first.at_ns + 1)) == 2, what="both")
    hooks = claude_rig.hooks
    prompts, stops = hooks.of("UserPromptSubmit", session.session_id), hooks.of("Stop", session.session_id)
    return Turns(session, prompts, stops, len(anthropic.turns()))


def test_the_prompts_line_carries_the_hooks_prompt_id_and_the_turns_other_lines_name_no_prompt(turns: Turns) -> None:
    read_whole(turns.prompts[0], turns.stops[0])
    prompt_id = turns.prompts[0]["prompt_id"]
    (line,) = [
        e for e in turns.transcript if e.get("promptId") == prompt_id and e["message"]["content"] == "read a and b"
    ]
    assert line["type"] == "user"
    assistant = [e for e in turns.transcript if e["type"] == "assistant"]
    assert assistant and all("promptId" not in e for e in assistant)


def test_each_content_block_of_a_request_is_a_line_naming_the_request_and_holding_its_whole_usage(
    turns: Turns,
) -> None:
    read_whole(turns.prompts[0], turns.stops[0])
    first = [e for e in turns.transcript if e["type"] == "assistant"][:2]
    assert [e["apiBlockIndex"] for e in first] == [0, 1]
    assert first[0]["requestRef"] == first[1]["requestRef"] != ""
    assert all(e["message"]["usage"]["output_tokens"] == READS.output for e in first)
    assert all(e["message"]["usage"]["cache_read_input_tokens"] == READS.cache_read for e in first)
    assert "requestId" not in first[0]
    requests = {e["id"] for e in turns.transcript if e["type"] == "api-request"}
    assert first[0]["requestRef"] in requests


def test_the_turn_ends_in_the_transcript_with_turn_duration_written_after_the_stop_hook_ran(turns: Turns) -> None:
    read_whole(turns.prompts[0], turns.stops[0])
    kinds = [(e["type"], e.get("subtype")) for e in turns.transcript if e["type"] in {"assistant", "system"}]
    first_turn = kinds[: kinds.index(("system", "turn_duration")) + 1]
    assert first_turn[-3:] == [("assistant", None), ("system", "stop_hook_summary"), ("system", "turn_duration")]


def test_the_turns_usage_is_what_the_stand_in_served_each_request_counted_once(turns: Turns) -> None:
    assert read_whole(turns.prompts[0], turns.stops[0]) == spent(READS, ANSWER)
    assert turns.requests == 4  # the turns' own requests: Claude made none beside them


def test_a_prompt_queued_while_busy_is_named_by_its_own_stop_and_its_turn_read_apart(turns: Turns) -> None:
    running, queued = turns.prompts[1:]
    running_stop, queued_stop = turns.stops[1:]
    assert queued["prompt_id"] == running["prompt_id"]  # its prompt's hook names the turn it waited on
    assert queued_stop["prompt_id"] != running_stop["prompt_id"] == running["prompt_id"]
    assert read_whole(running, running_stop) == spent(RUNNING)
    assert read_whole(queued, queued_stop) == spent(QUEUED)
