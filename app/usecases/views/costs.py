"""What the turns cost, summed by item, author, repository, label, harness or day, and where each
budget stands: from the store's cost rows alone (no transcript is read again)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from domain.pricing import dollars
from domain.spending import Budget, Spent, Standing, TurnCost

GROUPS = ("item", "author", "repository", "label", "harness", "day")


@dataclass(frozen=True, slots=True)
class Tally:
    """The turns of one group: their four token counts, the money of those priced, and how many were
    unknown (their agent's records did not say) or tokens only (no price for their model)."""

    key: str
    turns: int = 0
    input: int = 0
    output: int = 0
    cache_write: int = 0
    cache_read: int = 0
    micro_dollars: int = 0
    unknown: int = 0
    unpriced: int = 0  # known in tokens, no price for the model

    @property
    def tokens(self) -> int:
        return self.input + self.output + self.cache_write + self.cache_read

    def add(self, cost: TurnCost) -> Tally:
        u = cost.usage
        return Tally(
            self.key,
            self.turns + 1,
            self.input + (u.input if u else 0),
            self.output + (u.output if u else 0),
            self.cache_write + (u.cache_write if u else 0),
            self.cache_read + (u.cache_read if u else 0),
            self.micro_dollars + (cost.micro_dollars or 0),
            self.unknown + int(u is None),
            self.unpriced + int(u is not None and cost.micro_dollars is None),
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "turns": self.turns,
            "tokens_in": self.input,
            "tokens_out": self.output,
            "cache_write": self.cache_write,
            "cache_read": self.cache_read,
            "tokens": self.tokens,
            "usd_estimated": self.micro_dollars / 1_000_000,
            "usage_unknown": self.unknown,
            "tokens_only": self.unpriced,
        }


def _keys(by: str) -> Callable[[TurnCost], Iterable[str]]:
    """What a turn is counted under: a turn with several labels under each (their sums overlap); one
    with none under `(no label)`."""
    return {
        "item": lambda c: [str(c.item)],
        "author": lambda c: [c.author or "(a start's prompt)"],
        "repository": lambda c: [f"{c.item.repo.owner}/{c.item.repo.name}"],
        "label": lambda c: sorted(c.labels) or ["(no label)"],
        "harness": lambda c: [c.harness],
        "day": lambda c: [c.ended_at.strftime("%Y-%m-%d")],
    }[by]


def tallied(costs: Iterable[TurnCost], by: str) -> list[Tally]:
    """The turns summed by `by` (one of GROUPS), the dearest first (then by tokens); by day, in order."""
    keys, found = _keys(by), dict[str, Tally]()
    for cost in costs:
        for key in keys(cost):
            found[key] = found.get(key, Tally(key)).add(cost)
    if by == "day":
        return sorted(found.values(), key=lambda t: t.key)
    return dearest(found.values())


def dearest(tallies: Iterable[Tally]) -> list[Tally]:
    """The dearest first, then by tokens, then by name."""
    return sorted(tallies, key=lambda t: (-t.micro_dollars, -t.tokens, t.key))


def total(costs: Iterable[TurnCost]) -> Tally:
    whole = Tally("total")
    for cost in costs:
        whole = whole.add(cost)
    return whole


def money(tally: Tally) -> str:
    """`$1.23 est.`, with what it leaves out; `unknown` when no turn's usage was said, `tokens only`
    when no turn had a price."""
    if tally.turns and tally.unknown == tally.turns:
        return "unknown"
    if tally.turns and tally.unpriced + tally.unknown == tally.turns:
        return "tokens only" + (f" (+{tally.unknown} unknown)" if tally.unknown else "")
    left = [f"{n} {what}" for n, what in ((tally.unpriced, "unpriced"), (tally.unknown, "unknown")) if n]
    return f"{dollars(tally.micro_dollars)} est." + (f" (+{', '.join(left)})" if left else "")


def running(tally: Tally | None) -> str:
    """A total as one cell says it: `$1.23 est.` (the money of its priced turns), `12,345 tokens` (none
    priced), `—` (no turn, or none whose usage was said)."""
    if tally is None or tally.unknown == tally.turns:
        return "—"
    if tally.unpriced + tally.unknown == tally.turns:
        return f"{tally.tokens:,} tokens"
    return f"{dollars(tally.micro_dollars)} est."


def turns(count: int) -> str:
    return f"{count} turn{'' if count == 1 else 's'}"


def turn_said(cost: TurnCost) -> str:
    """One turn's four counts and its money: `1,000 in · 500 out · 0 cache write · 2,000 cache read ·
    $0.0030 est.`, `… · tokens only (no price for MODEL)`, or `usage unknown`."""
    u = cost.usage
    if u is None:
        return "usage unknown"
    counts = f"{u.input:,} in · {u.output:,} out · {u.cache_write:,} cache write · {u.cache_read:,} cache read"
    if cost.micro_dollars is None:
        return f"{counts} · tokens only (no price for {u.model or 'its model'})"
    return f"{counts} · {dollars(cost.micro_dollars)} est."


def standings(
    budgets: Sequence[Budget], costs_since: Callable[[datetime | None], list[TurnCost]], now: datetime
) -> list[Standing]:
    """Where every subject of every budget stands now, from the cost rows of its period: each item,
    repository, label or author that has spent under it (a day's or month's: all it covers)."""
    found: list[Standing] = []
    for budget in budgets:
        since, period = budget.period(now)
        spent: dict[str, Spent] = {}
        subjects = {}
        for cost in costs_since(since):
            for subject in budget.subjects(cost.item, cost.labels, cost.author):
                spent[subject.name] = spent.get(subject.name, Spent()) + Spent.of(cost)
                subjects[subject.name] = subject
        found += [Standing(subjects[name], spent[name], period, budget.next_period(now)) for name in sorted(spent)]
    return sorted(found, key=lambda s: -s.share)
