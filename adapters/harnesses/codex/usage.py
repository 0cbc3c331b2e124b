"""What one turn of Codex cost, from its rollout (the hooks' `transcript_path`:
`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl`), pinned against the 0.169.0
binary (tests/codex/test_codex_usage_facts.py):

- each model request of a turn is a `token_usage_record` line whose payload names the turn
  (`turn_id`, the hooks' own) and the response (`response_id`), with that request's `usage`
  (`input_tokens`, counting the cached ones too, `cached_input_tokens`, `cache_write_input_tokens`,
  `output_tokens`, counting the reasoning) and the turn's so far (`turn_token_usage`); a cache
  write (0 from the Responses API) makes the turn unknown;
- the turn's `turn_context` line names its `model`; an `event_msg` of type `task_complete` naming
  the turn ends it, written after the Stop hook ran.

The task title Codex asks the model for beside each prompt is in no record: it is not counted.
"""

from __future__ import annotations

from typing import Any

from adapters.agents.transcript import Entries, count, turn_usage
from domain.receipts import EndedTurn
from domain.usage import TurnUsage, Usage, UsageUnknown, summed

_FIELDS = ("input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens")


def usage(turn: EndedTurn) -> Usage:
    """What the turn its end's receipt (its Stop hook: `turn_id`, `transcript_path`) names cost,
    when it is the turn its prompt's receipt names. A prompt typed while Codex works joins the
    running turn (its UserPromptSubmit names that turn, and one Stop ends both): the-loop pairs it
    with that end (`domain.receipts.closed_turn`) and says the turn's cost with the prompt that
    started it. An end paired with a prompt of another turn (the prompt's own end never said)
    tells nothing of the prompt's turn."""
    if turn.prompt.turn and turn.prompt.turn != turn.end.turn:
        return UsageUnknown("its end names a turn other than the one its prompt ran in")
    return turn_usage(turn.end, of_turn)


USAGE = usage


def of_turn(entries: Entries, turn_id: str) -> Usage:
    """The usage of turn `turn_id` in a rollout's entries: each response once, the turn ended, its
    responses adding up to the turn's own count; unknown for a line of a shape not pinned."""
    responses: dict[str, TurnUsage] = {}
    so_far: TurnUsage | None = None
    model, ended = "", False
    for entry in entries:
        payload = entry.get("payload")
        if not isinstance(payload, dict) or payload.get("turn_id") != turn_id:
            continue
        kind = entry.get("type")
        if kind == "token_usage_record":
            response, whole = payload.get("response_id"), _tokens(payload.get("turn_token_usage"))
            request = _tokens(payload.get("usage"))
            if not isinstance(response, str) or request is None or whole is None:
                return UsageUnknown("a token_usage_record of its turn names no response, or has a usage not pinned")
            responses[response], so_far = request, whole
        elif kind == "turn_context" and isinstance(payload.get("model"), str):
            model = payload["model"]
        elif kind == "event_msg" and payload.get("type") == "task_complete":
            ended = True
    if not ended:
        return UsageUnknown("its turn's end is not in the rollout yet", pending=True)
    total = summed(responses.values())
    if total is None or so_far is None:
        return UsageUnknown("its turn has no token_usage_record")
    if total != so_far:
        return UsageUnknown("its requests' usage does not add up to its turn's (turn_token_usage)")
    return TurnUsage(total.input, total.output, total.cache_write, total.cache_read, model)


def _tokens(fields: Any) -> TurnUsage | None:
    """One usage object in the Messages API's partition: the cached tokens taken out of the input,
    which counts them too (the Responses API's). None for a shape not pinned, a cache write among
    them: whether the input counts those too is the provider's, and not pinned."""
    found = [count(fields, name) for name in _FIELDS]
    if None in found:
        return None
    whole, read, written, output = (value or 0 for value in found)
    if written or read > whole:
        return None
    return TurnUsage(input=whole - read, output=output, cache_write=0, cache_read=read)
