"""A receipt source for service tests: a harness in FakeTmux that writes receipts as a real one
would — ready a moment after its spawn, a prompt receipt for its argv prompt and for each paste —
with switches for the harness that never gets ready, ignores pastes, or waits on a dialog."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import timedelta

from domain.asks import AnswerState
from domain.errors import TrustError
from domain.model import ReceiptChannel
from domain.ports import ReceiptPort
from domain.receipts import Receipt, ReceiptKind, ReceiptMode
from domain.refs import WorkItemRef
from tests.fakes.clock import FakeClock
from tests.fakes.tmux import FakePane, FakeTmux


@dataclass
class _Spawn:
    item: WorkItemRef
    prepared: float  # the clock's monotonic reading: readiness is a duration, whatever the wall clock does
    receipts: list[Receipt] = field(default_factory=list)


class FakeReceipts(ReceiptPort):
    def __init__(self, tmux: FakeTmux, clock: FakeClock, *, ready_after: float = 1.0) -> None:
        self._clock = clock
        self.ready_after = ready_after
        self.never_ready = False  # a trust dialog: no hook ever fires
        self.ignore_pastes = False  # pastes never reach the agent (no receipt)
        self.prompt_after = 0.0  # seconds a paste's prompt receipt takes (opencode's: its TUI hands it on)
        self.argv_prompt_after = 0.0  # seconds its command line's prompt's receipt takes beyond its ready one
        self.prompt_turn = ""  # the turn its prompt receipts name ('': none), as Codex's name the turn a prompt runs in
        self.spawns: dict[str, _Spawn] = {}
        self.modes: dict[str, ReceiptMode] = {}
        self._due: dict[str, float] = {}  # receipt key -> when it shows, on the clock that never jumps
        self._seq = 0
        # a permission request's hook — takes an answer given (`hook_takes`), or has stopped waiting
        self.hook_takes = True
        self.given: dict[str, str] = {}  # receipt key -> the answer handed to its hook
        self.expired: set[str] = set()
        tmux.listeners.append(self._heard)

    # -- arranging --------------------------------------------------------------------------

    def plant(self, spawn: str, kind: ReceiptKind, *, after: float = 0.0, **fields: str) -> None:
        """The harness of `spawn` writes a receipt `after` seconds from now."""
        self.spawns[spawn].receipts.append(self._receipt(kind, after, **fields))

    # -- the port ---------------------------------------------------------------------------

    def prepare(self, item: WorkItemRef, spawn: str, *, mode: ReceiptMode, hooks: str = "") -> ReceiptChannel:
        self.spawns[spawn] = _Spawn(item, self._clock.monotonic())
        self.modes[spawn] = mode
        return ReceiptChannel(env=(("THE_LOOP_RECEIPTS", f"/receipts/{spawn}"),))

    def read(self, item: WorkItemRef, spawn: str) -> list[Receipt]:
        found = self.spawns.get(spawn)
        if found is None or found.item != item:
            return []
        # written by then, whatever the wall clock says now; in the order of their names, as files
        now = self._clock.monotonic()
        return sorted((r for r in self._all(found) if self._due[r.key] <= now), key=lambda r: r.key)

    def find(self, item: WorkItemRef, line: str) -> bool:
        spawns = [s for s, found in list(self.spawns.items()) if found.item == item]
        return any(r.kind is ReceiptKind.PROMPT and line in r.prompt for s in spawns for r in self.read(item, s))

    def forget(self, item: WorkItemRef, *, keep: Collection[str] = ()) -> None:
        # a snapshot: other items' lanes prepare their spawns meanwhile
        for spawn in [s for s, found in list(self.spawns.items()) if found.item == item and s not in keep]:
            del self.spawns[spawn]

    def give(self, item: WorkItemRef, spawn: str, key: str, output: str) -> None:
        self.given[key] = output

    def answer_state(self, item: WorkItemRef, spawn: str, key: str) -> AnswerState:
        if key in self.given:
            return AnswerState.TAKEN if self.hook_takes else AnswerState.GIVEN
        return AnswerState.EXPIRED if key in self.expired else AnswerState.NONE

    def withdraw(self, item: WorkItemRef, spawn: str, key: str) -> bool:
        if self.hook_takes or key not in self.given:
            return False
        del self.given[key]
        return True

    # -- the harness's side -------------------------------------------------------------------

    def _ready_in(self, spawn: _Spawn) -> float:
        return max(0.0, spawn.prepared + self.ready_after - self._clock.monotonic())

    def _all(self, spawn: _Spawn) -> list[Receipt]:
        if self.never_ready:
            return [r for r in spawn.receipts if r.kind is not ReceiptKind.READY]
        return spawn.receipts

    def _heard(self, what: str, pane: FakePane, text: str) -> None:
        spawn = self.spawns.get(pane.mark)
        if spawn is None or self.never_ready:
            return
        if what == "spawn":
            ready = self._ready_in(spawn)
            source = "resume" if "--resume" in pane.argv else "startup"
            spawn.receipts.append(self._receipt(ReceiptKind.READY, ready, source=source))
            if text:
                spawn.receipts.append(self._receipt(ReceiptKind.PROMPT, ready + self.argv_prompt_after, prompt=text))
        elif not self.ignore_pastes:
            after = max(self._ready_in(spawn), self.prompt_after)
            spawn.receipts.append(self._receipt(ReceiptKind.PROMPT, after, prompt=text, turn=self.prompt_turn))

    def _receipt(self, kind: ReceiptKind, after: float, **fields: str) -> Receipt:
        """Written `after` seconds from now: named by the wall clock then, as the real hook's `date`
        names it; shown once that much time has passed, whatever the wall clock says."""
        self._seq += 1
        at = self._clock.now() + timedelta(seconds=after)
        key = f"{int(at.timestamp() * 1e9):020d}-{self._seq:06d}"
        self._due[key] = self._clock.monotonic() + after
        return Receipt(kind=kind, key=key, at=at, **fields)


@dataclass
class FakeTrust:
    """Claude Code's trusted folders; `fail` makes it refuse like an unparseable file."""

    trusted: list[str] = field(default_factory=list)
    fail: bool = False

    kinds: list[str] = field(default_factory=list)  # whose configuration each record went to (its hooks)

    def trust(self, directory: str, *, hooks: str = "") -> bool:
        self.kinds.append(hooks)
        if self.fail:
            raise TrustError("/home/op/.claude.json: not JSON (injected); not touching the file")
        if directory in self.trusted:
            return False
        self.trusted.append(directory)
        return True
