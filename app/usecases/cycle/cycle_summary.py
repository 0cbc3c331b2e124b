"""What one poll cycle did: counts for the log, the heartbeat and the one-line report."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from domain.budget import InstallationBudget, RateBudget
from domain.refs import RepoRef


@dataclass
class CycleSummary:
    started_at: datetime
    items: int = 0
    delivered: int = 0
    failed: int = 0
    abandoned: int = 0
    skipped: int = 0
    spawned: int = 0
    closed: int = 0
    sources_failed: int = 0
    items_failed: int = 0
    min_interval_seconds: float = 0.0  # the longest pace a tracker asked for this cycle
    budgets: dict[str, RateBudget] = field(default_factory=dict)  # per host, of its one token: the last one stated
    # in App mode, per host and installation instead: the last one stated
    installations: dict[tuple[str, int], InstallationBudget] = field(default_factory=dict)
    finished_at: datetime | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    # once said, what an item's lane still does counts in the next cycle's summary
    then: CycleSummary | None = field(default=None, repr=False, compare=False)

    def add(self, **counts: int) -> None:
        with self.lock:
            later = self.then
            if later is None:
                for key, value in counts.items():
                    setattr(self, key, getattr(self, key) + value)
        if later is not None:
            later.add(**counts)

    def note_budget(self, repo: RepoRef, budget: RateBudget) -> None:
        """What a reply on `repo` said of the budget its requests count against."""
        if budget.installation is None:
            self.budgets[repo.host] = budget
            return
        key = (repo.host, budget.installation)
        known = self.installations.get(key)
        owners = tuple(sorted({*(known.owners if known else ()), repo.owner}))
        self.installations[key] = InstallationBudget(repo.host, budget.installation, owners, budget)

    def fields(self) -> dict[str, Any]:
        names = (
            "items",
            "delivered",
            "failed",
            "abandoned",
            "skipped",
            "spawned",
            "closed",
            "sources_failed",
            "items_failed",
        )
        return {name: getattr(self, name) for name in names}

    def line(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.fields().items())
