"""What the agents' turns cost, kept one row a turn, and the budgets that hold further comments once
what they cover has spent its allowance.

A turn's cost is recorded once, when its end is read (keyed by its item and comment: a second host
or a second read records nothing more). A budget covers some turns — an item's, a repository's, a
label's items', an author's comments', or every turn of a day or a month (UTC) — and allows them
money (estimated: `domain.pricing`), tokens, or both. At 80% of an allowance the item is told once;
at 100% its comments wait (none is pasted) until the allowance is raised or, for a day's or a
month's, the next one begins. A turn under way is never stopped: its cost counts when it ends."""

from __future__ import annotations

import enum
import fnmatch
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from domain.refs import WorkItemRef
from domain.usage import TurnUsage

WARN_AT = 0.8  # of an allowance: the item is told once


@dataclass(frozen=True, slots=True)
class TurnCost:
    """One turn the-loop started with a comment (or a start's prompt), and what it cost. `usage` None:
    the agent's records did not say (`unknown` in its event); `micro_dollars` None: tokens only (its
    model has no price), or no usage."""

    item: WorkItemRef
    comment_id: str  # the comment whose prompt started the turn (a start's or resume's: its delivery id)
    ended_at: datetime
    harness: str
    author: str = ""  # the comment's author as the tracker gave it ("" for a start's prompt)
    labels: frozenset[str] = frozenset()  # the item's labels when the turn ended, casefolded
    usage: TurnUsage | None = None
    micro_dollars: int | None = None

    @property
    def tokens(self) -> int:
        """Every token the turn's requests sent and got: the four counts together."""
        u = self.usage
        return 0 if u is None else u.input + u.output + u.cache_write + u.cache_read


@dataclass(frozen=True, slots=True)
class Spent:
    """What some turns cost together; turns whose usage was unknown are counted apart, and those with
    tokens but no price add no money (`priced` says how many had one)."""

    micro_dollars: int = 0
    tokens: int = 0
    turns: int = 0
    unknown: int = 0  # turns whose usage the agent's records did not say
    priced: int = 0

    def __add__(self, other: Spent) -> Spent:
        return Spent(
            self.micro_dollars + other.micro_dollars,
            self.tokens + other.tokens,
            self.turns + other.turns,
            self.unknown + other.unknown,
            self.priced + other.priced,
        )

    @classmethod
    def of(cls, cost: TurnCost) -> Spent:
        return cls(
            micro_dollars=cost.micro_dollars or 0,
            tokens=cost.tokens,
            turns=1,
            unknown=int(cost.usage is None),
            priced=int(cost.micro_dollars is not None),
        )


class Scope(enum.Enum):
    ITEM = "item"
    REPOSITORY = "repository"
    LABEL = "label"
    AUTHOR = "author"
    DAY = "day"
    MONTH = "month"


@dataclass(frozen=True, slots=True)
class Budget:
    """An allowance: `micro_dollars` and/or `tokens` (None: not limited in it). `match` is a glob over
    what the scope names (`owner/repo#42`, `owner/repo`, a label, a login; for a day or a month, the
    repositories it covers), case-insensitive; "" matches all. Each item, repository, label or author
    it matches has an allowance of its own; a day's or month's is shared by every turn it covers."""

    scope: Scope
    match: str = ""
    micro_dollars: int | None = None
    tokens: int | None = None

    @property
    def key(self) -> str:
        """What names it in the store (its raised allowance, its notices) and in `the-loop budget`."""
        return f"{self.scope.value}:{self.match}" if self.match else self.scope.value

    def subjects(self, item: WorkItemRef, labels: frozenset[str], author: str) -> tuple[Subject, ...]:
        """What of this turn's or comment's it covers, each with its own allowance."""
        named = {
            Scope.ITEM: [f"{_repo(item)}#{item.number}"],
            Scope.REPOSITORY: [_repo(item)],
            Scope.LABEL: sorted(labels),
            Scope.AUTHOR: [author] if author else [],
            Scope.DAY: [_repo(item)],
            Scope.MONTH: [_repo(item)],
        }[self.scope]
        found = [name for name in named if self._matches(name)]
        if self.scope in {Scope.DAY, Scope.MONTH}:
            return (Subject(self, self.match or "*"),) if found else ()  # one allowance for all it covers
        return tuple(Subject(self, name) for name in found)

    def counts(self, repo: str) -> bool:
        """A day's or month's budget: whether the turns of repository `repo` (`owner/name`) count."""
        return self._matches(repo)

    def _matches(self, name: str) -> bool:
        return not self.match or fnmatch.fnmatchcase(name.casefold(), self.match.casefold())

    def period(self, now: datetime) -> tuple[datetime | None, str]:
        """Since when its turns count, and the period's name ("" for a budget without one)."""
        at = now.astimezone(UTC)
        if self.scope is Scope.DAY:
            return datetime(at.year, at.month, at.day, tzinfo=UTC), at.strftime("%Y-%m-%d")
        if self.scope is Scope.MONTH:
            return datetime(at.year, at.month, 1, tzinfo=UTC), at.strftime("%Y-%m")
        return None, ""

    def next_period(self, now: datetime) -> datetime | None:
        """When its allowance starts afresh (None: never by itself)."""
        start, _ = self.period(now)
        if start is None:
            return None
        if self.scope is Scope.DAY:
            return start + timedelta(days=1)
        return datetime(start.year + start.month // 12, start.month % 12 + 1, 1, tzinfo=UTC)

    def share(self, spent: Spent) -> float:
        """How much of its allowance `spent` is: the larger of money's and tokens' share."""
        shares = [0.0]
        if self.micro_dollars is not None:
            shares.append(spent.micro_dollars / self.micro_dollars if self.micro_dollars else float("inf"))
        if self.tokens is not None:
            shares.append(spent.tokens / self.tokens if self.tokens else float("inf"))
        return max(shares)


@dataclass(frozen=True, slots=True)
class Subject:
    """One thing a budget holds to its allowance: an item, a repository, a label, an author; for a
    day's or month's budget, all it covers together (named by its `match`, or `*`)."""

    budget: Budget
    name: str


@dataclass(frozen=True, slots=True)
class Standing:
    """Where one subject stands against its budget in the current period."""

    subject: Subject
    spent: Spent
    period: str  # "2026-12-07", "2026-12", or "" (no period)
    next_period: datetime | None

    @property
    def share(self) -> float:
        return self.subject.budget.share(self.spent)

    @property
    def reached(self) -> bool:
        return self.share >= 1.0

    @property
    def warned(self) -> bool:
        return self.share >= WARN_AT


def _repo(item: WorkItemRef) -> str:
    return f"{item.repo.owner}/{item.repo.name}"
