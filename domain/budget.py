"""A tracker's request budget, and when the cycle may spend it on reads: light on its own, so
`status` reads it without the domain model."""

from __future__ import annotations

import enum
from dataclasses import dataclass

# requests kept back from reads for what the-loop must still write (notices, replies, reactions)
DEFAULT_RATE_FLOOR = 100


@dataclass(frozen=True, slots=True)
class RateBudget:
    """A request budget as its last reply stated it (GitHub's `x-ratelimit-*`): requests left of
    `limit`, and when the count starts again (epoch seconds, on our clock). `installation`: the
    GitHub App installation whose budget it is (each has its own); None: the host's one token."""

    remaining: int
    limit: int
    reset_epoch: float
    installation: int | None = None


@dataclass(frozen=True, slots=True)
class InstallationBudget:
    """One GitHub App installation's budget on `host`, with the owners of the repositories read
    with it (an installation is on one account: usually one)."""

    host: str
    installation: int
    owners: tuple[str, ...]
    budget: RateBudget


class Spend(enum.Enum):
    READ = "read"  # the cycle reads the repository
    HOLD = "hold"  # its reads wait for the reset; writes may still spend what is left


@dataclass(frozen=True, slots=True)
class ReadDecision:
    choice: Spend
    reason: str
    until_epoch: float | None = None  # HOLD: the budget's reset


def read_decision(budget: RateBudget | None, *, floor: int, now_epoch: float) -> ReadDecision:
    """Whether a repository is read with `budget`, the one its requests are counted against (its
    installation's in App mode): reads stop at `floor` requests left, so the notices, status replies
    and reactions the-loop must make can still be sent until the reset."""
    if budget is None:
        return ReadDecision(Spend.READ, "no budget stated yet")
    if budget.reset_epoch <= now_epoch:
        return ReadDecision(Spend.READ, "the budget has been reset since it was stated")
    if budget.remaining <= floor:
        whose = "" if budget.installation is None else f"installation {budget.installation}: "
        reason = (
            f"{whose}{budget.remaining} of {budget.limit} requests left, at or below the floor of {floor}"
            " kept for notices and replies"
        )
        return ReadDecision(Spend.HOLD, reason, budget.reset_epoch)
    return ReadDecision(Spend.READ, f"{budget.remaining} of {budget.limit} requests left, above the floor of {floor}")
