"""The soak's month on the sandbox tracker: items labelled and closed day by day, comments on them
(an authorized author's on items with a session, meant for the agent; a stranger's on any open
item, never), what was meant to be pasted remembered to count what was lost or pasted twice."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from adapters.clock import SystemClock
from adapters.sandbox.tracker import SandboxTracker
from bench.soak.daemon import AUTHORIZED, LABEL, STRANGER
from domain.model import DeliveryId, ItemState
from domain.refs import RepoRef, WorkItemRef

REPO = RepoRef.parse("soak/month")


@dataclass(frozen=True, slots=True)
class Form:
    """How big: the month's items and comments, over `days`; an item stays open `open_days`."""

    items: int
    comments: int
    days: int
    open_days: int = 3
    session_every: int = 10  # one item in ten is by the authorized author: it gets a session
    authorized_share: float = 0.1  # of the comments, meant for an agent
    restart_every: int = 5  # days
    idle_cycles: int = 5
    log_max_bytes: int = 4 * 1024 * 1024
    log_keep: int = 2
    concurrent: int = 8


@dataclass
class Month:
    form: Form
    state: Path
    seed: int = 23
    meant: list[str] = field(default_factory=list)  # delivery ids meant for an agent
    strangers: list[str] = field(default_factory=list)  # delivery ids never meant for one
    opened: dict[WorkItemRef, int] = field(default_factory=dict)  # open items, the day each opened
    closed: int = 0

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)
        self._tracker: SandboxTracker | None = None
        self._made = 0

    @property
    def tracker(self) -> SandboxTracker:
        if self._tracker is None:
            self.state.mkdir(parents=True, exist_ok=True)
            self._tracker = SandboxTracker(self.state / "sandbox.sqlite3", clock=_now)
        return self._tracker

    def close(self) -> None:
        if self._tracker is not None:
            self._tracker.close()

    def open_items(self, day: int) -> None:
        """This day's share of the month's items, each labelled as it is made."""
        due = round(self.form.items * (day + 1) / self.form.days) - self._made
        for _ in range(due):
            self._made += 1
            author = AUTHORIZED if self._made % self.form.session_every == 1 else STRANGER
            ref = self.tracker.create_item(REPO, f"item {self._made}", author=author, labels=(LABEL,))
            self.opened[ref] = day

    def sessions(self) -> list[WorkItemRef]:
        return [ref for ref in self.opened if self._by_authorized(ref)]

    def comment(self, day: int) -> None:
        """This day's share of the month's comments."""
        due = round(self.form.comments * (day + 1) / self.form.days) - len(self.meant) - len(self.strangers)
        with_session, everything = self.sessions(), list(self.opened)
        for _ in range(due):
            meant = with_session and self._random.random() < self.form.authorized_share
            ref = self._random.choice(with_session if meant else everything)
            note = self.tracker.add_comment(ref, "please look at this again", author=AUTHORIZED if meant else STRANGER)
            (self.meant if meant else self.strangers).append(str(DeliveryId.for_comment(note.id)))

    def close_items(self, day: int) -> None:
        """The items opened `open_days` ago are closed upstream."""
        for ref in [ref for ref, opened in self.opened.items() if day - opened >= self.form.open_days]:
            self.tracker.close_item(ref, ItemState.CLOSED)
            del self.opened[ref]
            self.closed += 1

    def counted(self, pastes: list[str]) -> tuple[int, int]:
        """Lost (meant, never pasted) and duplicated (meant and pasted more than once, or pasted and
        never meant)."""
        seen = Counter(pastes)
        lost = sum(1 for d in self.meant if not seen[d])
        duplicated = sum(seen[d] - 1 for d in self.meant if seen[d] > 1) + sum(seen[d] for d in self.strangers)
        return lost, duplicated

    def _by_authorized(self, ref: WorkItemRef) -> bool:
        return (ref.number - 1) % self.form.session_every == 0


def _now() -> datetime:
    return SystemClock().now()
