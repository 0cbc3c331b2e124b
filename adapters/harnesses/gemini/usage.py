"""What one turn of Gemini CLI cost, from its session record (the hooks' `transcript_path`:
`~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl`), pinned against the 0.61.0 binary
(tests/gemini/test_gemini_usage_facts.py):

- the record is its conversation's metadata, then each message on a line of its own (`id`, `type`
  user or gemini), written again whole under its id when it changes; a `$set` line updates the
  metadata, and one setting `messages` replaces them all (a session's start writes one). From its
  source (`ChatRecordingService`, `loadConversationRecord`), not pinned by a run: `$rewindTo` drops
  the message it names and those after it;
- a prompt is a `user` message whose text is the prompt its BeforeAgent and AfterAgent hooks give;
  a tool's result is a `user` message of `functionResponse` parts;
- each model request is a `gemini` message holding its `model` and `tokens`: `input` (counting the
  cached ones), `cached`, `output` (without the reasoning), `thoughts`, `tool`, `total`. A
  tool-use prompt count (0 from the stand-in: whether the input counts it is not pinned) is unknown;
- the turn's answer, a `gemini` message calling no tool, is written before its AfterAgent hook runs.

The requests Gemini makes beside its turns (its model router's before each prompt, pinned; the
others its source makes, such as compressing the chat) are in no record: not counted.
"""

from __future__ import annotations

from typing import Any

from adapters.agents.transcript import Entries, count, entries_from
from domain.receipts import EndedTurn
from domain.usage import TurnUsage, Usage, UsageUnknown, summed

_COUNTS = ("input", "output", "cached", "thoughts", "tool", "total")


def usage(turn: EndedTurn) -> Usage:
    """What the turn its end's receipt (its AfterAgent hook: `prompt`, `transcript_path`) names
    cost, when that is the prompt its prompt's receipt (BeforeAgent) names: Gemini's hooks name no
    turn, so its prompt's text finds it in the record."""
    prompt, end = turn.prompt.prompt, turn.end
    if not prompt or not end.transcript:
        return UsageUnknown("its prompt's hook named no prompt, or its end's no record")
    if end.prompt != prompt:
        return UsageUnknown("its end names a prompt other than its own")
    entries = entries_from(end.transcript, "")  # found at the start: the whole record, its messages rewritten
    return entries if isinstance(entries, UsageUnknown) else of_prompt(entries, prompt)


USAGE = usage


def of_prompt(entries: Entries, prompt: str) -> Usage:
    """The usage of the turn of `prompt` in a record's lines: each request once, the turn answered;
    unknown for a line or a message of a shape not pinned."""
    found = messages(entries)
    if isinstance(found, UsageUnknown):
        return found
    starts = [at for at, message in enumerate(found) if _is_prompt(message) and _text(message) == prompt]
    if not starts:
        return UsageUnknown("its prompt is not in the record (yet)", pending=True)
    if len(starts) > 1:
        return UsageUnknown("its prompt's text is in more than one message of the record")
    return _turn(found[starts[0] + 1 :])


def messages(entries: Entries) -> list[dict[str, Any]] | UsageUnknown:
    """The record's messages as Gemini reads them back: each in the place it was first written, as
    it was last written; `$set` and `$rewindTo` lines applied."""
    kept: dict[str, dict[str, Any]] = {}
    for entry in entries:
        changes = entry.get("$set")
        if _is_message(entry):
            kept[entry["id"]] = entry
        elif isinstance(entry.get("$rewindTo"), str):
            kept = _rewound(kept, entry["$rewindTo"])
        elif isinstance(changes, dict):
            if isinstance(changes.get("messages"), list):
                kept = {m["id"]: m for m in changes["messages"] if _is_message(m)}
        elif not (isinstance(entry.get("sessionId"), str) and "projectHash" in entry):
            return UsageUnknown("a line of its record is of a shape not pinned")
    return list(kept.values())


def _is_message(entry: Any) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("id"), str)


def _rewound(kept: dict[str, dict[str, Any]], to: str) -> dict[str, dict[str, Any]]:
    """The messages before `to`; none when `to` is not among them (as Gemini reads a rewind)."""
    ids = list(kept)
    return {i: kept[i] for i in ids[: ids.index(to)]} if to in ids else {}


def _turn(after: list[dict[str, Any]]) -> Usage:
    """The requests of the messages after a prompt, up to the next prompt."""
    requests: list[TurnUsage] = []
    answered = False
    for message in after:
        if _is_prompt(message):
            break
        if message.get("type") == "gemini":
            request = _request(message)
            if isinstance(request, UsageUnknown):
                return request
            requests.append(request)
            answered = not message.get("toolCalls")
        elif message.get("type") == "user":  # a tool's result
            answered = False
        else:
            return UsageUnknown(f"a message of its turn is of a type not pinned ({str(message.get('type'))[:40]})")
    if not answered:
        written_on = not any(_is_prompt(message) for message in after)
        return UsageUnknown("its turn's answer is not in the record", pending=written_on)
    return summed(requests) or UsageUnknown("its turn made no model request")


def _request(message: dict[str, Any]) -> TurnUsage | UsageUnknown:
    found = {name: count(message.get("tokens"), name) for name in _COUNTS}
    missing = [name for name, value in found.items() if value is None]
    if missing:
        return UsageUnknown(f"a model message of its turn has no tokens {', '.join(missing)}")
    whole, output, cached, thoughts, tool = (found[name] or 0 for name in _COUNTS[:5])
    if tool or cached > whole:
        return UsageUnknown("a model message of its turn counts tool-use prompt tokens, or more cached than input")
    model = message.get("model")
    return TurnUsage(
        input=whole - cached,
        output=output + thoughts,
        cache_write=0,
        cache_read=cached,
        model=model if isinstance(model, str) else "",
    )


def _is_prompt(message: dict[str, Any]) -> bool:
    """A user message that is not a tool's result."""
    content = message.get("content")
    parts = content if isinstance(content, list) else []
    return message.get("type") == "user" and not any(isinstance(p, dict) and "functionResponse" in p for p in parts)


def _text(message: dict[str, Any]) -> str:
    """A message's text as Gemini's hooks give a prompt (its text parts, joined)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))
