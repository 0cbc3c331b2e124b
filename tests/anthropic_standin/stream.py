"""The Messages API's reply shapes: a whole message, its server-sent event stream, an error body."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

MODEL = "claude-standin"
# what a reply's usage says when a test scripts none
NO_USAGE: dict[str, int] = {"input_tokens": 1, "output_tokens": 1}


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_use_block(tool_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def message(
    message_id: str,
    blocks: list[dict[str, Any]],
    stop_reason: str,
    model: str = MODEL,
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    """A complete (non-streamed) reply; `usage` as the API says it (its `*_tokens` fields)."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": dict(usage or NO_USAGE),
    }


def events(
    message_id: str,
    blocks: list[dict[str, Any]],
    stop_reason: str,
    model: str = MODEL,
    usage: dict[str, int] | None = None,
) -> Iterator[dict[str, Any]]:
    """The streamed form of `message(...)`, event by event, as the API sends it: the start carries
    the input's usage and one output token so far, the delta the output's final count."""
    whole = dict(usage or NO_USAGE)
    start = message(message_id, [], stop_reason, model, whole | {"output_tokens": 1}) | {"stop_reason": None}
    yield {"type": "message_start", "message": start}
    yield {"type": "ping"}
    for index, block in enumerate(blocks):
        yield from _block_events(index, block)
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": whole["output_tokens"]},
    }
    yield {"type": "message_stop"}


def _block_events(index: int, block: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if block["type"] == "text":
        yield {"type": "content_block_start", "index": index, "content_block": text_block("")}
        delta = {"type": "text_delta", "text": block["text"]}
    else:  # tool_use: the input arrives as JSON text in pieces; one piece is enough
        empty = block | {"input": {}}
        yield {"type": "content_block_start", "index": index, "content_block": empty}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    yield {"type": "content_block_delta", "index": index, "delta": delta}
    yield {"type": "content_block_stop", "index": index}


def sse(stream: Iterator[dict[str, Any]]) -> bytes:
    """Server-sent events: each event's type on an `event:` line, its JSON on a `data:` line."""
    return b"".join(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode() for event in stream)


def error(kind: str, text: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": text}}
