"""Found by the kill campaign (bench/chaos, seed 11): a resumed harness that took the comment on its
argv, said so, and died before the resume was judged must not get the comment again in a fresh
conversation — a receipt-capable harness never gets a comment twice."""

from __future__ import annotations

from datetime import datetime, timedelta

from domain.events import Event
from domain.ledger import Resolution
from domain.model import Probe
from domain.refs import TmuxTarget
from tests.fakes.clock import FakeClock
from tests.fakes.tmux import FakePane, FakeTmux
from tests.service.world import World


class ResumedHarnessDiesOnceReady(FakeTmux):
    """A resumed harness takes its argv prompt (its receipts say so a second after its spawn), then
    dies at that instant, before the-loop looks again; every prompt any harness took is kept."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__()
        self.clock = clock
        self.took: list[str] = []  # argv prompts and pastes, of every harness ever spawned
        self.resumed: list[tuple[FakePane, datetime]] = []
        self.listeners.append(self._heard)

    def _heard(self, what: str, pane: FakePane, text: str) -> None:
        if text:
            self.took.append(text)
        if what == "spawn" and "--resume" in pane.argv:
            self.resumed.append((pane, self.clock.now()))

    def probe(self, target: TmuxTarget, *, mark: str, pane: str = "") -> Probe:
        for resumed, spawned_at in self.resumed:
            if self.clock.now() >= spawned_at + timedelta(seconds=1):
                resumed.dead = True
        return super().probe(target, mark=mark, pane=pane)


def test_a_resumed_harness_that_took_the_comment_and_died_is_not_given_it_again() -> None:
    clock = FakeClock()
    tmux = ResumedHarnessDiesOnceReady(clock)
    world = World(tmux=tmux, clock=clock)
    ref = world.watched()
    world.vanish(ref)  # its harness is gone: the next comment resumes its conversation
    comment = world.comment(ref, "please look at TOKEN-1")

    world.cycle()

    assert sum(prompt.count("TOKEN-1") for prompt in tmux.took) == 1
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    assert world.record(ref).harness_session_id == "sid-1"  # the conversation that holds it
    assert world.events.named(Event.SESSION_RESUME_FAILED) == []
