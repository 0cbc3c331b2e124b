"""Watching a harness: is it ready, did it confirm a prompt, did its turn end — from its receipts,
or, for a harness without receipts, from its pane staying alive."""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable
from dataclasses import dataclass

from domain.asks import AnswerState
from domain.errors import SessionMissing, TmuxFailed, TmuxUnanswered
from domain.model import HarnessSpec, Probe, SessionRecord, SessionState
from domain.ports import ClockPort, ReceiptPort, TmuxPort
from domain.receipts import (
    TOOL_GRACE_SECONDS,
    HarnessState,
    Receipt,
    ReceiptKind,
    ReceiptMode,
    confirms,
    harness_state,
    open_requests,
    still_typed,
)
from domain.refs import WorkItemRef

POLL_SECONDS = 0.2
# a paste without its prompt receipt this long after its Enter (or the last one sent
# again) is looked for in the input box; Gemini CLI's receipt comes within ~0.1 s of a submission
ENTER_RETRY_SECONDS = 2.0
SCREEN_LINES = 60  # the input box sits at the bottom: a pane's height is enough
# a TUI redraws by erasing its lines and writing them again, and tmux may take that in more than one
# read: a look in between finds the screen blank or half written (Gemini CLI's, under load). A screen
# without a blocked text is believed once two looks this far apart agree, or after SCREEN_LOOKS: a
# screen that never settles (a busy agent's spinner) costs each check 0.2 s, not a second
SCREEN_SETTLE_SECONDS = 0.1
SCREEN_LOOKS = 3
# a receipt is looked for this often while a confirmation (or a resume's ready) is awaited. A look is one
# scandir of the spawn's folder, each file parsed once (FileReceipts caches them): cheap enough to
# poll, where inotify would need ctypes and a fallback for the filesystems it does not cover
RECEIPT_POLL_SECONDS = 0.005
PROBE_EVERY = round(POLL_SECONDS / RECEIPT_POLL_SECONDS)  # looks between two probes of the pane


class Verdict(enum.Enum):
    YES = "yes"  # ready / confirmed
    BLOCKED = "blocked"  # waiting on a dialog in its session
    DEAD = "dead"  # its pane died, or it said its conversation ended
    TIMEOUT = "timeout"  # it never said so in time
    STOPPING = "stopping"  # the daemon is stopping: the wait was cut short, nothing is known yet


@dataclass(frozen=True, slots=True)
class Watched:
    verdict: Verdict
    reason: str
    screen: str = ""  # the pane's last lines, when the verdict is not YES (trust dialog, login …)
    source: str = ""  # READY: startup or resume


class HarnessWatch:
    def __init__(self, *, tmux: TmuxPort, receipts: ReceiptPort, clock: ClockPort) -> None:
        self._tmux = tmux
        self._receipts = receipts
        self._clock = clock
        # set by the daemon: a confirmation wait ends when it stops (the next run settles the
        # delivery as after a crash: by its receipt, or by the harness still running)
        self.stopping: Callable[[], bool] = lambda: False

    def memory(self, record: SessionRecord) -> int | None:
        """Its harness's resident memory now (its process group's), in bytes; None when unknown."""
        return self._tmux.group_memory(record.harness_group) if record.harness_group else None

    def receipts(self, record: SessionRecord) -> list[Receipt]:
        return self._receipts.read(record.item, record.spawn_id) if record.spawn_id else []

    def taken(self, record: SessionRecord, receipts: list[Receipt]) -> frozenset[str]:
        """The keys of the open requests whose hook took a decision from the item (a denied tool
        never runs: only its hook says it was answered)."""
        return frozenset(
            receipt.key
            for receipt in open_requests(receipts)
            if self._receipts.answer_state(record.item, record.spawn_id, receipt.key) is AnswerState.TAKEN
        )

    def forget(self, item: WorkItemRef) -> None:
        """Every receipt folder of `item`: for when nothing can look them up again."""
        self._receipts.forget(item)

    def state(
        self, record: SessionRecord, harness: HarnessSpec, probe: Probe | None = None, *, settled: bool = True
    ) -> HarnessState:
        """`settled`: a screen without a blocked text is believed once it settled (a paste follows); a
        view (the session list, the page, a status reply) takes one look, which a redraw may fool."""
        probe = probe or self._probe(record)
        if probe.harness is SessionState.UNKNOWN:
            return HarnessState.UNKNOWN
        if probe.harness is not SessionState.LIVE:
            return HarnessState.DEAD
        if harness.receipts is ReceiptMode.NONE:
            young = self._elapsed(record) < harness.ready_seconds
            return HarnessState.STARTING if young else HarnessState.READY
        receipts = self.receipts(record)
        state = harness_state(receipts, now=self._clock.now(), taken=self.taken(record, receipts))
        looks = SCREEN_LOOKS if settled else 1
        if state.accepts_prompts and harness.blocked_screens and self._shows_dialog(record, probe, harness, looks):
            return HarnessState.BLOCKED
        return state

    def _shows_dialog(self, record: SessionRecord, probe: Probe, harness: HarnessSpec, looks: int) -> bool:
        """A dialog the hooks do not report (Gemini CLI's sign-in) shows on the screen — on any look,
        or none until two looks agree: one taken in the middle of a redraw misses it."""
        pane = probe.pane or record.pane_id
        if not pane:
            return False
        previous = None
        for look in range(looks):
            if look:
                self._clock.sleep(SCREEN_SETTLE_SECONDS)
            screen = self._tmux.screen(record.target, pane, lines=SCREEN_LINES)
            if any(text in screen for text in harness.blocked_screens):
                return True
            if screen == previous:
                return False
            previous = screen
        return False

    def running(self, record: SessionRecord) -> bool:
        """Its harness pane runs (or tmux did not answer: never read as gone)."""
        return self._probe(record).harness in {SessionState.LIVE, SessionState.UNKNOWN}

    def wait_ready(self, record: SessionRecord, harness: HarnessSpec, *, paste_follows: bool = True) -> Watched:
        """Until the harness says it is ready (without receipts: is still alive `readySeconds`
        after its spawn), says it is blocked, dies, or `readySeconds` after its spawn pass — and
        never less than a tool's grace from now: a harness about to run a tool is ready or blocked
        within it. The pane and the receipts are looked at every POLL_SECONDS. Without
        `paste_follows` (a resume: its prompt is on its argv, nothing is pasted once it is ready),
        the receipts are looked at every RECEIPT_POLL_SECONDS in between, and the next look comes
        as soon as the harness says something: the comment it carries is confirmed that much
        sooner. A paste keeps the slower pace: Claude Code may lose the Enter of a paste sent the
        instant it says it is ready (docs/claude-code.md, "Observed, not pinned")."""
        left = max(0.0, harness.ready_seconds - self._elapsed(record))
        deadline = self._clock.monotonic() + max(left, TOOL_GRACE_SECONDS)
        while True:
            probe = self._probe(record)
            state = self.state(record, harness, probe)
            if state.accepts_prompts:
                return Watched(Verdict.YES, f"harness {state.value}", source=self._ready_source(record))
            if state is HarnessState.BLOCKED:
                return Watched(Verdict.BLOCKED, "harness waits for an answer in its session")
            # an `ended` receipt while its pane still runs is not its death: a Claude Code resuming a
            # conversation whose process was killed says the old session ended, then starts (the
            # kill campaign); a harness that really ended exits, and its pane says so
            if state is HarnessState.DEAD:
                return Watched(Verdict.DEAD, f"harness {state.value} before it said it was ready")
            if self._clock.monotonic() >= deadline:
                return self._timed_out(record, probe, f"harness not ready {harness.ready_seconds:g}s after its spawn")
            if paste_follows or harness.receipts is ReceiptMode.NONE:
                self._clock.sleep(POLL_SECONDS)
            else:
                self._until_said(record, POLL_SECONDS)

    def _until_said(self, record: SessionRecord, seconds: float) -> None:
        """Up to `seconds`, ended as soon as the harness writes a receipt (looked for every
        RECEIPT_POLL_SECONDS: a folder listing, no tmux call). Its looks are counted as well as
        timed: it ends after `seconds` of sleeps even where the monotonic clock is slow to move."""
        said = len(self.receipts(record))
        end = self._clock.monotonic() + seconds
        for _ in range(max(1, round(seconds / RECEIPT_POLL_SECONDS))):
            left = end - self._clock.monotonic()
            if left <= 0:
                return
            self._clock.sleep(min(RECEIPT_POLL_SECONDS, left))
            if len(self.receipts(record)) != said:
                return

    def starting(self, record: SessionRecord, harness: HarnessSpec) -> bool:
        """Its harness (with receipts) has not said it is ready yet."""
        if harness.receipts is ReceiptMode.NONE:
            return False
        return harness_state(self.receipts(record), now=self._clock.now()) is HarnessState.STARTING

    def hung(self, record: SessionRecord, harness: HarnessSpec) -> bool:
        """Its harness still has not said it is ready `hungSeconds` after its spawn: it hung in its
        start (opencode does, now and then, with a blank screen) and never will."""
        return self._elapsed(record) >= harness.hung_seconds and self.starting(record, harness)

    def wait_confirmed(self, record: SessionRecord, harness: HarnessSpec, line: str, *, spawned: bool) -> Watched:
        """Until a receipt holds `line` (without receipts: the pane is still alive
        `confirmSeconds` later), the harness dies, time is up, or the daemon stops. A prompt on a
        spawn's argv also waits for the harness to start: `readySeconds` more, and its ready receipt
        too (opencode says it took that prompt before its TUI shows the session, and is ready then)."""
        budget = harness.start_seconds if spawned else harness.confirm_seconds
        if harness.receipts is ReceiptMode.NONE:
            return self._alive_after(record, budget)
        deadline = self._clock.monotonic() + budget
        enters, next_enter = (0 if spawned else harness.enter_retries), self._clock.monotonic() + ENTER_RETRY_SECONDS
        for look in itertools.count(1):
            said = self.receipts(record)
            if confirms(said, line) and (not spawned or any(r.kind is ReceiptKind.READY for r in said)):
                return Watched(Verdict.YES, "the harness's receipt names the delivery")
            timed_out = self._clock.monotonic() >= deadline
            if look % PROBE_EVERY == 0 or timed_out:  # a probe is a tmux call: about every POLL_SECONDS
                probe = self._probe(record)
                if probe.harness in {SessionState.DEAD, SessionState.ABSENT}:
                    if confirms(self.receipts(record), line):  # it may have confirmed, then exited
                        return Watched(Verdict.YES, "the harness's receipt names the delivery")
                    return self._timed_out(record, probe, "harness pane died before it confirmed", Verdict.DEAD)
                if timed_out:
                    return self._timed_out(record, probe, f"no receipt within {budget:g}s")
            if self.stopping():
                return Watched(Verdict.STOPPING, "the daemon is stopping")
            if enters and self._clock.monotonic() >= next_enter:
                next_enter = self._clock.monotonic() + ENTER_RETRY_SECONDS
                enters -= self._enter_again(record, line)
            self._clock.sleep(RECEIPT_POLL_SECONDS)
        raise AssertionError("unreachable")

    def _enter_again(self, record: SessionRecord, line: str) -> int:
        """One more carriage return while the input box still shows the paste
        (its Enter became a newline); never the text again. How many were sent (0 or 1)."""
        pane = record.pane_id or self._probe(record).pane
        if not pane or not still_typed(self._tmux.screen(record.target, pane, lines=SCREEN_LINES), line):
            return 0
        try:
            self._tmux.submit(record.target, pane=pane, mark=record.spawn_id)
        except (SessionMissing, TmuxFailed, TmuxUnanswered):
            return 0
        return 1

    def _alive_after(self, record: SessionRecord, budget: float) -> Watched:
        """A harness without receipts confirms by its pane still running `budget` seconds on."""
        deadline = self._clock.monotonic() + budget
        while (left := deadline - self._clock.monotonic()) > 0:
            if self.stopping():
                return Watched(Verdict.STOPPING, "the daemon is stopping")
            self._clock.sleep(min(POLL_SECONDS, left))
        return self.alive(record, budget)

    def alive(self, record: SessionRecord, budget: float) -> Watched:
        """Whether the harness pane of `record`'s spawn still runs, `budget` seconds after a paste."""
        probe = self._probe(record)
        if probe.harness in {SessionState.LIVE, SessionState.UNKNOWN}:
            return Watched(Verdict.YES, f"harness pane still {probe.harness.value} after {budget:g}s")
        return Watched(Verdict.DEAD, f"harness pane {probe.harness.value} within {budget:g}s")

    def _timed_out(
        self, record: SessionRecord, probe: Probe, reason: str, verdict: Verdict = Verdict.TIMEOUT
    ) -> Watched:
        pane = probe.pane or record.pane_id
        return Watched(verdict, reason, screen=self._tmux.screen(record.target, pane) if pane else "")

    def _ready_source(self, record: SessionRecord) -> str:
        return next((r.source for r in self.receipts(record) if r.kind is ReceiptKind.READY), "")

    def _probe(self, record: SessionRecord) -> Probe:
        return self._tmux.probe(record.target, mark=record.spawn_id, pane=record.pane_id)

    def _elapsed(self, record: SessionRecord) -> float:
        """Seconds since the spawn: on the clock that never jumps when the record carries its
        reading from this boot; else (a record from before readings were kept) on the wall clock,
        never less than none."""
        if record.spawned_monotonic is not None and record.spawned_monotonic <= self._clock.monotonic():
            return self._clock.monotonic() - record.spawned_monotonic
        if record.spawned_at is None:
            return 0.0
        return max(0.0, (self._clock.now() - record.spawned_at).total_seconds())
