"""What each turn cost, for service tests: given by the turn id its end's receipt names."""

from __future__ import annotations

from domain.ports import UsagePort
from domain.receipts import EndedTurn
from domain.usage import Usage, UsageUnknown


class FakeUsage(UsagePort):
    def __init__(self) -> None:
        self.turns: dict[str, Usage] = {}  # turn id -> what it cost; a turn not here is unknown
        self.fails: Exception | None = None  # every read raises it, as a reader with a fault would
        self.asked: list[tuple[str, str]] = []  # (harness, turn) of each read

    def turn_usage(self, harness: str, turn: EndedTurn) -> Usage:
        self.asked.append((harness, turn.end.turn))
        if self.fails is not None:
            raise self.fails
        return self.turns.get(turn.end.turn, UsageUnknown("no usage recorded for the turn"))
