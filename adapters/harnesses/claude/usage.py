"""What one turn of Claude Code cost, from its transcript (the hooks' `transcript_path`), pinned
against the 2.1.328 binary (tests/claude/test_claude_usage_facts.py):

- the prompt's own line and its tool results are `user` lines whose `promptId` is the Stop hook's
  `prompt_id`; the turn's other lines (its `assistant` lines, attachments, system lines) name no
  prompt and follow them in the file;
- each model request is one `assistant` line per content block, all naming the request
  (`requestRef`, the id of its `api-request` line) and each holding the whole request's
  `message.usage` (`input_tokens`, `cache_creation_input_tokens`, `cache_read_input_tokens`,
  `output_tokens`) and the `message.model` that answered: a request is counted once;
- the turn ends with a `system` line of subtype `turn_duration`, written after the Stop hook ran.
"""

from __future__ import annotations

from typing import Any

from adapters.agents.transcript import Entries, count, turn_usage
from domain.receipts import EndedTurn
from domain.usage import TurnUsage, Usage, UsageUnknown, summed

# tools whose requests Claude Code records apart from the turn's lines (not pinned): such a turn is unknown
_SUBAGENT_TOOLS = frozenset({"Agent", "Task"})
_FIELDS = {
    "input": "input_tokens",
    "output": "output_tokens",
    "cache_write": "cache_creation_input_tokens",
    "cache_read": "cache_read_input_tokens",
}


def usage(turn: EndedTurn) -> Usage:
    """What the turn its end's receipt (its Stop hook: `prompt_id`, `transcript_path`) names cost.
    Its prompt's own receipt is no guide: a prompt queued while Claude Code is busy names the
    running turn in its UserPromptSubmit, then runs a turn of its own, which its Stop names."""
    return turn_usage(turn.end, of_prompt)


USAGE = usage


def of_prompt(entries: Entries, prompt_id: str) -> Usage:
    """The usage of the turn of `prompt_id` in a transcript's entries: each request once, the turn
    ended; unknown for a line of a shape not pinned."""
    requests: dict[str, TurnUsage] = {}
    current, seen, ended = "", False, False
    for entry in entries:
        owner = entry.get("promptId")
        current = owner if isinstance(owner, str) else current
        if current != prompt_id:
            continue
        seen = True
        if entry.get("type") == "assistant":
            found = _request(entry)
            if isinstance(found, UsageUnknown):
                return found
            reference, request = found
            requests[reference] = request  # a request's lines hold the same usage: the last stands
            ended = False
        elif entry.get("type") == "system" and entry.get("subtype") == "turn_duration":
            ended = True
    if not seen:
        return UsageUnknown("its prompt is not in the transcript (yet)", pending=True)
    if not ended:
        return UsageUnknown("its turn's end is not in the transcript yet", pending=True)
    return summed(requests.values()) or UsageUnknown("its turn made no model request")


def _request(entry: dict[str, Any]) -> tuple[str, TurnUsage] | UsageUnknown:
    reference = entry.get("requestRef")
    message = entry.get("message")
    if not isinstance(reference, str) or not reference or not isinstance(message, dict):
        return UsageUnknown("an assistant line of its turn names no request (requestRef) or no message")
    if _subagent(message):
        return UsageUnknown("its turn ran a subagent, whose requests are recorded apart")
    counts = {name: count(message.get("usage"), field) for name, field in _FIELDS.items()}
    missing = [_FIELDS[name] for name, value in counts.items() if value is None]
    if missing:
        return UsageUnknown(f"an assistant line of its turn has no usage {', '.join(missing)}")
    model = message.get("model")
    return reference, TurnUsage(
        input=counts["input"] or 0,
        output=counts["output"] or 0,
        cache_write=counts["cache_write"] or 0,
        cache_read=counts["cache_read"] or 0,
        model=model if isinstance(model, str) else "",
    )


def _subagent(message: dict[str, Any]) -> bool:
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    return any(
        isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") in _SUBAGENT_TOOLS
        for block in blocks
    )
