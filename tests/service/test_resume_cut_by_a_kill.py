"""Found by the kill campaign with the real Codex (`bench.chaos --harness codex`, seed 291093495):
a resumed harness whose tmux session was killed from outside (its tmux server SIGKILLed) before it
said it was ready was judged a failed resume, and the-loop started a fresh conversation — dropping
the conversation that held every earlier comment, one of them confirmed to the agent (its
`UserPromptSubmit` receipt) a moment before and never sent to the model. A resume that vanished
with its session says nothing about the conversation: it is resumed again, never replaced."""

from __future__ import annotations

from domain.events import Event
from domain.ledger import Resolution
from domain.model import Probe
from domain.receipts import ReceiptKind
from domain.refs import TmuxTarget
from tests.fakes.receipts import FakeReceipts
from tests.fakes.tmux import FakePane, FakeTmux
from tests.service.world import World


class ServerKilledDuringTheResume(FakeTmux):
    """The first resumed harness's session is gone (its tmux server killed) at the first look after
    its spawn, before it wrote any receipt; every prompt any harness took is kept."""

    def __init__(self) -> None:
        super().__init__()
        self.took: list[str] = []
        self.pending: list[str] = []  # sessions to lose at the next probe
        self.cut = 0
        self.receipts: FakeReceipts | None = None  # its harness, gone, writes none
        self.listeners.append(self._heard)

    def _heard(self, what: str, pane: FakePane, text: str) -> None:
        if what == "spawn" and "--resume" in pane.argv and not self.cut:
            self.cut += 1  # gone before it read its argv
            self.pending.extend(name for name, s in self.sessions.items() if pane in s.panes)
        elif text:
            self.took.append(text)

    def probe(self, target: TmuxTarget, *, mark: str, pane: str = "") -> Probe:
        for name in self.pending:
            gone = self.sessions.pop(name)
            if self.receipts is not None:
                for spawned in gone.panes:
                    self.receipts.spawns.pop(spawned.mark, None)
        self.pending.clear()
        return super().probe(target, mark=mark, pane=pane)


def test_a_resume_cut_short_by_a_killed_tmux_server_keeps_its_conversation() -> None:
    tmux = ServerKilledDuringTheResume()
    world = World(tmux=tmux)
    assert isinstance(world.receipts, FakeReceipts)
    tmux.receipts = world.receipts
    ref = world.watched()
    world.vanish(ref)  # its harness is gone: the next comment resumes its conversation
    comment = world.comment(ref, "please look at TOKEN-1")

    for _ in range(world.max_retries + 1):
        world.cycle()

    assert tmux.cut == 1
    assert world.events.named(Event.SESSION_RESUME_FAILED) == []
    assert world.record(ref).harness_session_id == "sid-1"  # the conversation that holds the earlier comments
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    assert sum(prompt.count("TOKEN-1") for prompt in tmux.took) == 1
    assert [e["resumed"] for e in world.events.named(Event.SESSION_RESPAWNED)] == [True]  # again, after the cut


class EndsTheOldSessionFirst(FakeTmux):
    """Seen with the real Claude Code in the kill campaign (`--harness claude`, seed 2462575143): a
    harness resuming a conversation whose last process was SIGKILLed wrote a `SessionEnd` receipt at
    its start, and its `SessionStart` a moment later — alive all along."""

    def __init__(self) -> None:
        super().__init__()
        self.receipts: FakeReceipts | None = None
        self.listeners.append(self._heard)

    def _heard(self, what: str, pane: FakePane, text: str) -> None:
        if what == "spawn" and "--resume" in pane.argv and self.receipts is not None:
            self.receipts.plant(pane.mark, ReceiptKind.ENDED)  # at once: before its ready receipt


def test_an_ended_receipt_from_a_resume_whose_pane_still_runs_is_not_its_death() -> None:
    tmux = EndsTheOldSessionFirst()
    world = World(tmux=tmux)
    assert isinstance(world.receipts, FakeReceipts)
    tmux.receipts = world.receipts
    ref = world.watched()
    world.vanish(ref)
    comment = world.comment(ref, "please look at TOKEN-2")

    world.cycle()

    assert world.events.named(Event.SESSION_RESUME_FAILED) == []
    assert [e["resumed"] for e in world.events.named(Event.SESSION_RESPAWNED)] == [True]
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED


class KilledOnceReady(FakeTmux):
    """Seen with the real Codex in the kill campaign (`--harness codex`, seed 1002471062): a resumed
    harness said it was ready, took the prompt on its command line, and was SIGKILLed while its
    `UserPromptSubmit` hook ran. The pane was dead at the first look, the hook's receipt was written a
    moment later: the resume was judged failed and a fresh conversation was given the prompt too."""

    def __init__(self) -> None:
        super().__init__()
        self.took: list[str] = []  # every prompt a harness took: its receipt says so, now or later
        self.doomed: list[FakePane] = []  # resumed panes to kill at the next look
        self.cut = 0
        self.listeners.append(self._heard)

    def _heard(self, what: str, pane: FakePane, text: str) -> None:
        if what == "spawn" and "--resume" in pane.argv and not self.cut:
            self.cut += 1
            self.doomed.append(pane)
        if text:
            self.took.append(text)

    def probe(self, target: TmuxTarget, *, mark: str, pane: str = "") -> Probe:
        for doomed in self.doomed:
            session = next(s for s in self.sessions.values() if doomed in s.panes)
            self._pane_exited(session, doomed)
        self.doomed.clear()
        return super().probe(target, mark=mark, pane=pane)


def test_a_resumed_harness_killed_once_ready_keeps_its_conversation_and_is_not_given_the_prompt_again() -> None:
    tmux = KilledOnceReady()
    world = World(tmux=tmux)
    assert isinstance(world.receipts, FakeReceipts)
    world.receipts.ready_after = 0.0  # it said it was ready at once
    world.receipts.argv_prompt_after = 2.0  # its prompt's receipt comes after its death is seen
    ref = world.watched()
    world.vanish(ref)  # its harness is gone: the next comment resumes its conversation
    comment = world.comment(ref, "please look at TOKEN-3")

    for _ in range(world.max_retries + 1):
        world.cycle()

    assert tmux.cut == 1
    assert sum(prompt.count("TOKEN-3") for prompt in tmux.took) == 1
    assert world.record(ref).harness_session_id == "sid-1"  # the conversation that holds it
    assert world.events.named(Event.SESSION_RESUME_FAILED) == []
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
