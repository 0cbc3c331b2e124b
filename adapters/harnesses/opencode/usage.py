"""What one turn of opencode cost, from its own store (`store`: the SQLite database `opencode db path`
prints, which the plugin names as `transcript_path`), pinned against the 1.18.33 binary
(tests/opencode/test_opencode_usage_facts.py):

- the plugin's prompt receipt and the turn end paired with it name the prompt's `user` message
  (`prompt_id`, the id `chat.message` gives it);
- each model request answering it is one `assistant` message naming it (`parentID`), with that
  request's `tokens` (`input`, neither read from the prompt cache nor written to it, `output`
  without the reasoning, `reasoning`, `cache.read`, `cache.write`, and the provider's `total` of
  them), the `modelID` that answered, `time.completed` once written whole and the `finish` of the
  request (`tool-calls`: the run goes on, under the newest prompt);
- the store holds the turn whole when the plugin writes its end (on `session.idle`).

The title opencode asks the model for beside a session's first prompt is in no message: it is not
counted. A subagent's requests are the messages of a session of its own (`parent_id`): such a turn
is unknown.
"""

from __future__ import annotations

from typing import Any

from adapters.agents.transcript import count
from adapters.harnesses.opencode.store import Stored, stored
from domain.receipts import EndedTurn
from domain.usage import TurnUsage, Usage, UsageUnknown, summed

_GOES_ON = frozenset({"tool-calls", "unknown"})  # finishes after which opencode asks the model again
_TOKENS = ("total", "input", "output", "reasoning")
_CACHE = ("read", "write")


def usage(turn: EndedTurn) -> Usage:
    """What the prompt its end's receipt names (`prompt_id`, `transcript_path`) cost, when it is the
    prompt its own receipt names."""
    end = turn.end
    if not end.turn or not end.transcript:
        return UsageUnknown("its end's receipt named no prompt id or no store")
    if turn.prompt.turn != end.turn:
        return UsageUnknown("its end names another prompt than its own")
    found = stored(end.transcript, end.turn)
    return found if isinstance(found, UsageUnknown) else of_prompt(found, end.turn)


USAGE = usage


def of_prompt(found: Stored, prompt_id: str) -> Usage:
    """The usage of the turn of `prompt_id` in what the store holds from it on: each request once,
    the last one ending the run; unknown for a message of a shape not pinned."""
    if found.subagents:
        return UsageUnknown("its turn ran a subagent, whose requests are recorded in a session of its own")
    answers = [m for m in found.messages if m.get("role") == "assistant" and m.get("parentID") == prompt_id]
    later = any(m.get("role") == "assistant" and m.get("parentID") != prompt_id for m in found.messages)
    if not answers:
        return _open(later, "its prompt was answered in a later prompt's turn", "its turn's first request")
    requests = _requests(answers)
    if isinstance(requests, UsageUnknown):
        return requests
    if answers[-1].get("finish") in _GOES_ON:
        return _open(later, "its run went on under a later prompt, which took its requests after", "its next request")
    return summed(requests) or UsageUnknown("its turn made no model request")


def _open(later: bool, taken: str, awaited: str) -> UsageUnknown:
    """A turn its prompt's requests do not end: a later prompt's requests took it over, or the
    request `awaited` is not stored yet."""
    return UsageUnknown(taken) if later else UsageUnknown(f"{awaited} is not in opencode's store yet", pending=True)


def _requests(answers: list[dict[str, Any]]) -> list[TurnUsage] | UsageUnknown:
    requests = []
    for message in answers:
        request = _request(message)
        if isinstance(request, UsageUnknown):
            return request
        requests.append(request)
    return requests


def _request(message: dict[str, Any]) -> TurnUsage | UsageUnknown:
    if message.get("error") is not None:
        return UsageUnknown("a request of its turn failed or was cut short: what it cost may not be recorded")
    if count(message.get("time"), "completed") is None:
        return UsageUnknown("a request of its turn is not written whole yet", pending=True)
    tokens = message.get("tokens")
    cache = tokens.get("cache") if isinstance(tokens, dict) else None
    found = [count(tokens, name) for name in _TOKENS] + [count(cache, name) for name in _CACHE]
    if None in found:
        return UsageUnknown("an assistant message of its turn has tokens of a shape not pinned")
    total, input_, output, reasoning, read, written = (value or 0 for value in found)
    if total != input_ + output + reasoning + read + written:
        # opencode takes the cached tokens out of the provider's input and keeps 0 for less: what it
        # kept then is not what was sent
        return UsageUnknown("an assistant message of its turn has tokens that do not add up to their total")
    model = message.get("modelID")
    return TurnUsage(
        input=input_,
        output=output + reasoning,
        cache_write=written,
        cache_read=read,
        model=model if isinstance(model, str) else "",
    )
