"""What the stand-in answers to one model request: the behaviours a test scripts, as values."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from tests.anthropic_standin import stream


@dataclass(frozen=True, slots=True)
class Answer:
    """An HTTP answer: status, headers and body."""

    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Usage:
    """What a reply says it cost, in the Messages API's fields."""

    input: int = 1
    output: int = 1
    cache_write: int = 0
    cache_read: int = 0

    def fields(self) -> dict[str, int]:
        return {
            "input_tokens": self.input,
            "cache_creation_input_tokens": self.cache_write,
            "cache_read_input_tokens": self.cache_read,
            "output_tokens": self.output,
        }


@dataclass(frozen=True, slots=True)
class Say:
    """Reply with text and end the turn (Claude then runs its Stop hook)."""

    text: str = "Done."
    usage: Usage | None = None  # None: the API's minimum (1 in, 1 out)

    def blocks(self, number: int) -> tuple[list[dict[str, Any]], str]:
        return [stream.text_block(self.text)], "end_turn"


@dataclass(frozen=True, slots=True)
class UseTool:
    """Ask to run a tool; in the default permission mode Claude asks the user first."""

    name: str = "Bash"
    input: dict[str, Any] = field(default_factory=lambda: {"command": "touch x", "description": "Create file x"})
    usage: Usage | None = None

    def blocks(self, number: int) -> tuple[list[dict[str, Any]], str]:
        return [stream.tool_use_block(f"toolu_standin_{number:04d}", self.name, self.input)], "tool_use"


@dataclass(frozen=True, slots=True)
class UseTools:
    """Ask to run several tools in one message, in order."""

    tools: tuple[UseTool, ...]
    usage: Usage | None = None

    def blocks(self, number: int) -> tuple[list[dict[str, Any]], str]:
        return [
            stream.tool_use_block(f"toolu_standin_{number:04d}_{n}", tool.name, tool.input)
            for n, tool in enumerate(self.tools)
        ], "tool_use"


@dataclass(frozen=True, slots=True)
class Fail:
    """Answer an API error. `retry=False` sends `x-should-retry: false`, which Claude's API
    client obeys, so the turn fails at once instead of after its retries."""

    status: int = 500
    kind: str = "api_error"
    message: str = "scripted failure"
    retry: bool = False
    headers: tuple[tuple[str, str], ...] = ()  # more response headers (retry-after, rate-limit resets)


@dataclass(frozen=True, slots=True)
class Busy:
    """Hold the request `seconds` (or until the stand-in is released), then answer `then`."""

    seconds: float
    then: Say | UseTool | UseTools | Fail = field(default_factory=Say)


Behaviour = Say | UseTool | UseTools | Fail | Busy


def said(behaviour: Behaviour) -> Usage | None:
    """The usage a reply to `behaviour` says: None for a failure, the API's minimum (`Usage()`, as
    `stream.NO_USAGE`) where none was scripted."""
    if isinstance(behaviour, Busy):
        return said(behaviour.then)
    if isinstance(behaviour, Fail):
        return None
    return behaviour.usage or Usage()


def answer(behaviour: Behaviour, *, number: int, streamed: bool, release: threading.Event) -> Answer:
    """The answer to the `number`th model request; blocks while `behaviour` is Busy."""
    if isinstance(behaviour, Busy):
        release.wait(behaviour.seconds)
        return answer(behaviour.then, number=number, streamed=streamed, release=release)
    if isinstance(behaviour, Fail):
        headers = {"Content-Type": "application/json"}
        if not behaviour.retry:
            headers["x-should-retry"] = "false"
        headers |= dict(behaviour.headers)
        return Answer(behaviour.status, _json(stream.error(behaviour.kind, behaviour.message)), headers)
    blocks, stop_reason = behaviour.blocks(number)
    message_id = f"msg_standin_{number:04d}"
    usage = behaviour.usage.fields() if behaviour.usage is not None else None
    if streamed:
        body = stream.sse(stream.events(message_id, blocks, stop_reason, usage=usage))
        return Answer(200, body, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    reply = stream.message(message_id, blocks, stop_reason, usage=usage)
    return Answer(200, _json(reply), {"Content-Type": "application/json"})


def _json(doc: Any) -> bytes:
    return json.dumps(doc).encode()
