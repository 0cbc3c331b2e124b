"""The agent watchdog over a `FakeTmux`: it records the deadline, and `watch()` is one look of the
real one — once the clock's monotonic reading reaches the deadline, every live harness on that tmux
ends (an operator's window is not an agent: it is left alone). `unarmed`, when set, is why every arm
fails (the real one's deadline unwritable, or its process gone and not to be started again)."""

from __future__ import annotations

from domain.cluster import agents_may_run
from domain.errors import WatchdogUnarmed
from domain.ports import AgentWatchdogPort
from tests.fakes.clock import FakeClock
from tests.fakes.tmux import FakeTmux


class FakeWatchdog(AgentWatchdogPort):
    def __init__(self, tmux: FakeTmux, clock: FakeClock) -> None:
        self._tmux = tmux
        self._clock = clock
        self._deadline: float | None = None
        self.started = False
        self.unarmed: str | None = None
        self.arms: list[float] = []  # when each arm was tried, on the clock's monotonic reading
        self.ended_by_daemon: list[str] = []

    def arm(self, deadline: float) -> None:
        self.arms.append(self._clock.monotonic())
        if self.unarmed is not None:
            raise WatchdogUnarmed(self.unarmed)
        self._deadline = deadline

    def deadline(self) -> float | None:
        return self._deadline

    def start(self) -> None:
        self.started = True

    def end_now(self, *, reason: str) -> int:
        ended = self._live()
        for name in ended:
            self._tmux.exit_harness(name)
        self.ended_by_daemon += ended
        return len(ended)

    def _live(self) -> list[str]:
        return [name for name, session in self._tmux.sessions.items() if session.harness and not session.harness.dead]

    def watch(self) -> list[str]:
        """The sessions whose harness it ended at this look."""
        if not self.started or agents_may_run(deadline=self._deadline, now=self._clock.monotonic()).choice:
            return []
        ended = self._live()
        for name in ended:
            self._tmux.exit_harness(name)
        return ended
