"""One repository polled through GhTracker the way the poll cycle does, on the stand-in."""

from __future__ import annotations

from pathlib import Path

from adapters.github import GhTracker
from domain.model import CommentBatch
from domain.refs import RepoRef
from tests.github_standin import StandIn, World
from tests.github_standin.rigs import LABEL

REPO = "acme/widgets"


class Poller:
    """One repository polled the way the poll cycle does: work items, then new comments."""

    def __init__(self, standin: StandIn, *, items: int = 3, pulls: int = 0, state_dir: Path | None = None) -> None:
        self.world: World = standin.reset()
        for number in range(1, items + pulls + 1):
            self.world.add_issue(REPO, number, pull_request=number > items)
        self.world.tick(3600)  # the items are old news by the time polling starts
        self.repo = RepoRef.parse(REPO, host=standin.host)
        self._standin, self._state_dir = standin, state_dir
        self.tracker = self.restart()
        self.cursor: str | None = None

    def restart(self) -> GhTracker:
        """A new process (`poll --once` from cron): a new tracker on the same state folder; the
        cursor is the one the poll cycle saved."""
        self.tracker = GhTracker(
            host=self._standin.host, env=self._standin.gh_env(), timeout=20, state_dir=self._state_dir
        )
        return self.tracker

    def cycle(self) -> CommentBatch:
        self.tracker.work_items(self.repo, LABEL)
        batch = self.tracker.new_comments(self.repo, self.cursor)
        self.cursor = batch.cursor
        self.world.tick()
        return batch

    def warm(self) -> Poller:
        """Past the first listing and the first (unconditional) stream requests, an hour later
        (so a window's `since` is far behind and a full page moves it)."""
        self.cycle()
        self.cycle()
        self.world.tick(3600)
        self.world.reset_counters()
        return self

    def cost(self) -> tuple[int, int]:
        """Requests served and how many were 304, over one cycle."""
        self.world.reset_counters()
        self.cycle()
        return self.world.requests, self.world.not_modified
