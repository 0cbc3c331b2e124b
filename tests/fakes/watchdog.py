"""The agent watchdog over a `FakeTmux`: it records the deadline, and `watch()` is one look of the
real one — once the clock's monotonic reading reaches the deadline, every live harness on that tmux
ends (an operator's window is not an agent: it is left alone)."""

from __future__ import annotations

from domain.cluster import agents_may_run
from domain.ports import AgentWatchdogPort
from tests.fakes.clock import FakeClock
from tests.fakes.tmux import FakeTmux


class FakeWatchdog(AgentWatchdogPort):
    def __init__(self, tmux: FakeTmux, clock: FakeClock) -> None:
        self._tmux = tmux
        self._clock = clock
        self._deadline: float | None = None
        self.started = False

    def arm(self, deadline: float) -> None:
        self._deadline = deadline

    def deadline(self) -> float | None:
        return self._deadline

    def start(self) -> None:
        self.started = True

    def watch(self) -> list[str]:
        """The sessions whose harness it ended at this look."""
        if not self.started or agents_may_run(deadline=self._deadline, now=self._clock.monotonic()).choice:
            return []
        ended = [name for name, session in self._tmux.sessions.items() if session.harness and not session.harness.dead]
        for name in ended:
            self._tmux.exit_harness(name)
        return ended
