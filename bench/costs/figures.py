"""The comparison: what the store recorded against what the stand-ins served, per token kind and in
money, and the table that says it."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from bench.costs.plan import exact_micro_dollars
from bench.costs.run import AgentRun, Turn
from domain.pricing import MICRO
from domain.usage import TurnUsage, summed

KINDS = ("input", "output", "cache_write", "cache_read")
ROUNDING = Decimal("0.5")  # micro-dollars a turn's recorded cost may be off its exact one: rounded once, half up


@dataclass(frozen=True, slots=True)
class Figures:
    harness: str
    turns: int
    requests: int
    tool_turns: int  # turns of two requests
    served: dict[str, int]  # by kind, the turns' requests together
    recorded: dict[str, int]  # by kind, the store's rows together
    exact: Decimal  # micro-dollars: the served tokens at the entry's prices, unrounded
    recorded_micro: int
    unknown: list[tuple[str, str]]  # (turn, why)
    problems: list[str]  # every mismatch, turn by turn, and what never ended
    side_requests: str  # what they are
    side: int  # replies to requests that are not a turn's
    side_served: dict[str, int]

    @property
    def difference(self) -> Decimal:
        return self.recorded_micro - self.exact

    @property
    def allowed(self) -> Decimal:
        return ROUNDING * self.turns

    @property
    def accurate(self) -> bool:
        return not self.problems and self.served == self.recorded and abs(self.difference) <= self.allowed

    def as_json(self) -> dict[str, Any]:
        return {
            "harness": self.harness,
            "turns": self.turns,
            "requests": self.requests,
            "tool_turns": self.tool_turns,
            "served": self.served,
            "recorded": self.recorded,
            "micro_dollars": {
                "recorded": self.recorded_micro,
                "exact": str(self.exact),
                "difference": str(self.difference),
                "allowed": str(self.allowed),
            },
            "unknown": [{"turn": label, "reason": why} for label, why in self.unknown],
            "problems": self.problems,
            "not_counted": {
                "side": {"requests": self.side, "served": self.side_served},
            },
            "accurate": self.accurate,
        }


def figures(run: AgentRun) -> Figures:
    price = run.dialect.price
    problems = [*run.problems, *(problem for one in run.turns for problem in _mismatches(one, price))]
    costs = [t.recorded for t in run.turns if t.recorded is not None]
    return Figures(
        harness=run.harness,
        turns=len(run.turns),
        requests=sum(len(t.served) for t in run.turns),
        tool_turns=sum(len(t.served) > 1 for t in run.turns),
        served=_kinds(summed(t.served_total for t in run.turns)),
        recorded=_kinds(summed(c.usage for c in costs if c.usage is not None)),
        exact=sum((exact_micro_dollars(t.served_total, price) for t in run.turns), Decimal(0)),
        recorded_micro=sum(c.micro_dollars or 0 for c in costs),
        unknown=[
            (t.label, t.unknown or "no reason said") for t in run.turns if t.recorded and t.recorded.usage is None
        ],
        problems=problems,
        side_requests=run.dialect.side_requests,
        side=len(run.side),
        side_served=_kinds(summed(run.side)),
    )


def _mismatches(one: Turn, price: dict[str, str]) -> list[str]:
    """How one turn's row in the store differs from what was served for it, and from its event."""
    if one.recorded is None:
        return [f"{one.label}: no cost row in the store"]
    recorded, money = one.recorded.usage, one.recorded.micro_dollars
    exact = exact_micro_dollars(one.served_total, price)
    found = []
    if recorded != one.served_total:
        found.append(f"{one.label}: recorded {_said(recorded)}, served {_said(one.served_total)}")
    elif money is None or abs(money - exact) > ROUNDING:
        found.append(f"{one.label}: recorded {money} micro-dollars, exact {exact}")
    if _event(one.said) != (recorded, money):
        found.append(f"{one.label}: its session.turn_finished says {_event(one.said)}, the store {recorded} {money}")
    return found


def _event(said: dict[str, Any]) -> tuple[TurnUsage | None, int | None]:
    """What a turn's `session.turn_finished` says it cost: its tokens, and `usd_estimated` in micro-dollars."""
    usd = said.get("usd_estimated")
    money = round(Decimal(str(usd)) * MICRO) if usd is not None else None
    if said.get("usage") == "unknown" or "tokens_in" not in said:
        return None, money
    counts = (said["tokens_in"], said["tokens_out"], said["cache_write"], said["cache_read"])
    return TurnUsage(*counts, model=str(said.get("model", ""))), money


def _kinds(usage: TurnUsage | None) -> dict[str, int]:
    return {kind: getattr(usage, kind) if usage else 0 for kind in KINDS}


def _said(usage: TurnUsage | None) -> str:
    if usage is None:
        return "unknown"
    return f"{usage.input}/{usage.output}/{usage.cache_write}/{usage.cache_read} ({usage.model})"


def table(all_figures: list[Figures], *, seed: int, comments: int) -> str:
    lines = [
        f"the-loop's recorded costs (the store's costs()) against what the stand-ins served: seed {seed}, "
        f"{comments} comments per agent"
    ]
    for f in all_figures:
        calls = f"{f.tool_turns} of the turns call a tool"
        lines.append(f"{f.harness}: {f.turns} turns, {f.requests} model requests ({calls})")
        lines.append(f"  {'tokens':<12} {'served':>12} {'recorded':>12} {'difference':>11}")
        for kind in KINDS:
            served, recorded = f.served[kind], f.recorded[kind]
            lines.append(f"  {kind.replace('_', ' '):<12} {served:>12,} {recorded:>12,} {recorded - served:>11,}")
        lines.append(
            f"  money, micro-dollars: recorded {f.recorded_micro:,}, exact from served {f.exact:,}, "
            f"difference {f.difference:+} (rounding allows ±{f.allowed}: 0.5 a turn)"
        )
        unknown = "".join(f"; {label}: {why}" for label, why in f.unknown)
        lines.append(f"  turns whose usage was unknown: {len(f.unknown)}{unknown}")
        lines.append(f"  not counted (not a turn's): {f.side} requests, {f.side_requests}: {_tokens(f.side_served)}")
        lines += [f"  MISMATCH {problem}" for problem in f.problems]
        lines.append(f"  {f.harness}: {'accurate' if f.accurate else 'NOT ACCURATE'}")
    return "\n".join(lines)


def _tokens(counts: dict[str, int]) -> str:
    return ", ".join(f"{kind.replace('_', ' ')} {counts[kind]:,}" for kind in KINDS)
