"""What one turn of an agent cost in tokens, as the agent's own records say it: the model requests of
the turn a delivered comment started, summed; or unknown, with the reason, where the records do not
say it whole. A number is given only when it is the whole turn's: never a part of it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class TurnUsage:
    """Tokens in the Messages API's partition, whatever the agent's API: `input`, `cache_write` and
    `cache_read` add up to every input token the turn's requests sent."""

    input: int  # input tokens neither written to the prompt cache nor read from it
    output: int  # output tokens, the model's reasoning among them
    cache_write: int  # input tokens written to the prompt cache
    cache_read: int  # input tokens read from the prompt cache
    model: str = ""  # the model that answered ("a, b" when several did, in the order they first did)

    def __add__(self, other: TurnUsage) -> TurnUsage:
        return TurnUsage(
            input=self.input + other.input,
            output=self.output + other.output,
            cache_write=self.cache_write + other.cache_write,
            cache_read=self.cache_read + other.cache_read,
            model=_models(self.model, other.model),
        )


@dataclass(frozen=True, slots=True)
class UsageUnknown:
    """The records do not say what the turn cost, yet or at all: why."""

    reason: str
    pending: bool = False  # the turn is not written whole yet: a later read may say it


Usage = TurnUsage | UsageUnknown


@dataclass(frozen=True, slots=True)
class JoinedTurn:
    """The prompt joined a turn another prompt started (typed while the agent worked): that turn's
    cost is said with the prompt that started it, never twice."""

    delivery: str  # the delivery whose prompt started the turn ('': a prompt the-loop did not give)


def summed(requests: Iterable[TurnUsage]) -> TurnUsage | None:
    """The requests of one turn together; None for no request."""
    total: TurnUsage | None = None
    for request in requests:
        total = request if total is None else total + request
    return total


def usage_fields(usage: Usage | JoinedTurn) -> dict[str, Any]:
    """A turn's usage as an event says it."""
    if isinstance(usage, JoinedTurn):
        return {"usage": "joined", "joined_delivery": usage.delivery or None}
    if isinstance(usage, UsageUnknown):
        return {"usage": "unknown", "usage_reason": usage.reason}
    return {
        "tokens_in": usage.input,
        "tokens_out": usage.output,
        "cache_write": usage.cache_write,
        "cache_read": usage.cache_read,
        "model": usage.model,
    }


def _models(first: str, second: str) -> str:
    names = [name for text in (first, second) for name in text.split(", ") if name]
    return ", ".join(dict.fromkeys(names))
