"""What the stand-ins serve each turn, drawn from a seed: one model request, or two when the turn
asks for a tool first; each request's tokens in `TurnUsage`'s partition (the Messages API's: input
neither written to nor read from the cache, output, cache write, cache read). And each agent's
dialect: its stand-in's script for a request, and a reply the stand-in made read back in that
partition, as a turn's or as a side request's (not a turn's)."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, ClassVar, Protocol

from domain.usage import TurnUsage
from tests.anthropic_standin import script as anthropic
from tests.anthropic_standin.server import Kind
from tests.anthropic_standin.stream import MODEL
from tests.openai_standin import server as openai

TOOL_SHARE = 0.4  # of the turns: a tool call, then the answer (two requests)
NOTES = "notes.txt"  # in the agent's folder: what Claude's tool calls read
# kept well inside a context window: neither agent compacts its conversation (a request of its own)
MOST_INPUT, MOST_OUTPUT, MOST_CACHE_WRITE, MOST_CACHE_READ = 3_000, 1_500, 8_000, 20_000


@dataclass(frozen=True, slots=True)
class Request:
    """One model request's reply: its tokens, the reasoning among the output, whether it calls a tool."""

    usage: TurnUsage
    reasoning: int = 0
    tool: bool = False


def turn(rng: random.Random, *, cache_writes: bool) -> tuple[Request, ...]:
    """One turn's requests: a tool call then the answer, or the answer alone. `cache_writes`: whether
    the agent's API says a cache write (the Responses API does not)."""
    tool = rng.random() < TOOL_SHARE
    return tuple(_request(rng, tool=first and tool, cache_writes=cache_writes) for first in (True, False)[: 1 + tool])


def _request(rng: random.Random, *, tool: bool, cache_writes: bool) -> Request:
    output = rng.randint(1, MOST_OUTPUT)
    usage = TurnUsage(
        input=rng.randint(1, MOST_INPUT),
        output=output,
        cache_write=rng.choice((0, rng.randint(1, MOST_CACHE_WRITE))) if cache_writes else 0,
        cache_read=rng.choice((0, rng.randint(1, MOST_CACHE_READ))),
    )
    return Request(usage, reasoning=rng.randint(0, output) if not cache_writes else 0, tool=tool)


class Dialect(Protocol):
    """How one agent's stand-in is scripted, and its replies read back."""

    model: str  # what the stand-in's replies name, priced by the bench's `pricing.models` entry
    price: dict[str, str]  # US dollars per million tokens, by `pricing.models` key, as written in the file
    cache_writes: bool
    side_requests: str  # what the agent asks its model beside its turns

    def script(self, request: Request, *, text: str, folder: Path) -> Any:
        """The stand-in's behaviour serving `request` (`folder`: the agent's own, for a tool to read)."""

    def served(self, reply: Any) -> tuple[bool, TurnUsage]:
        """A reply the stand-in made: whether a turn's (else a side request's), and its tokens."""


class ClaudeDialect:
    """The Anthropic stand-in: its usage is already in the partition. A tool call reads a file of the
    agent's folder (a read-only tool: no permission asked)."""

    model = MODEL
    price: ClassVar[dict[str, str]] = {"input": "3.3", "output": "16.5", "cacheWrite": "4.125", "cacheRead": "0.33"}
    cache_writes = True
    side_requests = "Claude Code's requests without tools (titles, summaries)"

    def script(self, request: Request, *, text: str, folder: Path) -> Any:
        u = request.usage
        usage = anthropic.Usage(input=u.input, output=u.output, cache_write=u.cache_write, cache_read=u.cache_read)
        if request.tool:
            return anthropic.UseTool(name="Read", input={"file_path": str(folder / NOTES)}, usage=usage)
        return anthropic.Say(text, usage=usage)

    def served(self, reply: Any) -> tuple[bool, TurnUsage]:
        u = reply.usage
        return reply.request.kind is Kind.TURN, TurnUsage(u.input, u.output, u.cache_write, u.cache_read, self.model)


class CodexDialect:
    """The OpenAI stand-in (Responses API): its input counts the cached tokens, its output the
    reasoning; it says no cache write. A tool call runs `true`."""

    model = "standin-model"  # tests/codex/rig.py's config.toml
    price: ClassVar[dict[str, str]] = {"input": "1.37", "output": "10.9", "cacheRead": "0.137"}
    cache_writes = False
    side_requests = "Codex's task title, asked beside each prompt"

    def script(self, request: Request, *, text: str, folder: Path) -> Any:
        u = request.usage
        cached, reasoning = u.cache_read, request.reasoning
        usage = openai.Usage(input=u.input + cached, output=u.output, cached=cached, reasoning=reasoning)
        if request.tool:
            return openai.Call("shell", json.dumps({"command": ["true"]}), usage=usage)
        return openai.Say(text, usage=usage)

    def served(self, reply: Any) -> tuple[bool, TurnUsage]:
        u = reply.usage
        return not reply.request.is_side, TurnUsage(u.input - u.cached, u.output, 0, u.cached, self.model)


def exact_micro_dollars(usage: TurnUsage, price: dict[str, str]) -> Decimal:
    """`usage` at `price` (dollars per million tokens: micro-dollars per token), unrounded."""
    counts = {
        "input": usage.input,
        "output": usage.output,
        "cacheWrite": usage.cache_write,
        "cacheRead": usage.cache_read,
    }
    return sum((Decimal(price.get(kind, "0")) * n for kind, n in counts.items()), Decimal(0))
