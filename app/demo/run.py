"""`demo`: a sandbox item, its session spawned on first sight, one comment delivered into it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from app.cli.events_view import _visible as visible  # the one escaper of untrusted text for a terminal
from app.demo.sandbox import SandboxAdmin
from domain.errors import LoopError
from domain.ledger import Resolution
from domain.model import Comment, SessionRecord, SessionState, Source, SpawnMode
from domain.ports import ClockPort, StateStore, TmuxPort
from domain.refs import TmuxTarget, WorkItemRef

if TYPE_CHECKING:
    from app.config.settings import Settings  # a type only: the demo's parser stays light

TITLE = "Try the-loop"
BODY = "A sandbox work item opened by `python -m app demo`: no GitHub, no network."
COMMENT = "Hello from the-loop demo! This comment was posted on the sandbox item and delivered into this session."
DEMO_HARNESS = "demo"
READY_TEXT = "listening"  # what app/demo/harness.py shows once it reads pastes
_POLL_SECONDS = 0.05
_LAST_WORDS = 6  # pane lines quoted when a harness died
_FREE_NUMBERS = 100  # numbers tried past the sandbox's last one for a name no tmux session holds


class DemoFailed(LoopError):
    """The demo could not do what it shows; the message says what and where to look."""


class PaneScreen(Protocol):
    """What a tmux pane shows. Never fails: absent or unanswered reads as ''."""

    def text(self, target: TmuxTarget) -> str: ...


class Cycle(Protocol):
    def run(self) -> object: ...


@dataclass(frozen=True, slots=True)
class DemoPlan:
    source: Source
    author: str  # an authorized user: the item is armed and the comment a candidate
    ready_text: str | None  # None: a harness the demo does not know; it waits `settle_seconds`
    ready_timeout: float = 20.0
    settle_seconds: float = 3.0


@dataclass(frozen=True, slots=True)
class DemoReport:
    started_at: datetime
    record: SessionRecord
    comment: Comment
    screen: str  # the pane after delivery


def plan_for(settings: Settings) -> DemoPlan:
    """What the demo needs from the configuration, or why this one cannot run it."""
    source = next((s for s in settings.sources() if s.provider == "sandbox"), None)
    if source is None:
        raise DemoFailed("no sandbox source in polling.sources: run the demo without --config (the embedded default)")
    authors = settings.authorized.logins_on(source.repo.host)
    if not authors:
        empty = "is empty" if not settings.authorized_users else "names nobody on the sandbox's host"
        raise DemoFailed(f"routing.authorizedUsers {empty}: no comment may become a prompt")
    if not settings.tmux_socket:
        raise DemoFailed("routing.tmux.socketName is empty: the demo runs only on a private tmux server, never yours")
    if settings.spawn_mode is SpawnMode.NEVER:
        raise DemoFailed("routing.spawnOnUnmatched is never: the demo needs labeled or always")
    harness = settings.routing.default_harness
    return DemoPlan(
        source=source,
        author=authors[0],
        ready_text=READY_TEXT if harness == DEMO_HARNESS else None,
    )


@dataclass
class Demo:
    sandbox: SandboxAdmin
    cycle: Cycle
    store: StateStore
    tmux: TmuxPort
    screen: PaneScreen
    clock: ClockPort
    plan: DemoPlan

    def run(self) -> DemoReport:
        started = self.clock.now()
        item = self._open_item()
        self.cycle.run()  # first sight: baselined, and the session spawned with the spawn prompt
        record = self._spawned(item)
        self._wait_ready(record.target)
        comment = self.sandbox.add_comment(item, COMMENT, author=self.plan.author)
        self.cycle.run()
        self._delivered(comment)
        first_line = COMMENT.split("\n", 1)[0]
        shown = self._wait_for(record.target, lambda text: first_line in text) or self.screen.text(record.target)
        return DemoReport(started_at=started, record=record, comment=comment, screen=shown)

    def _open_item(self) -> WorkItemRef:
        """A new item each run, numbered so that no tmux session left by an earlier state holds its name."""
        repo = self.plan.source.repo
        last = max((e.item.ref.number for e in self.sandbox.list_items() if e.item.ref.repo == repo), default=0)
        for number in range(last + 1, last + 1 + _FREE_NUMBERS):
            state = self.tmux.session_state(WorkItemRef(repo, number).target)
            if state is SessionState.UNKNOWN:
                raise DemoFailed("tmux did not answer a probe of its private server (see: python -m app doctor)")
            if state is SessionState.ABSENT:
                labels = (self.plan.source.label,)
                author = self.plan.author
                return self.sandbox.create_item(repo, TITLE, BODY, author=author, labels=labels, number=number)
        raise DemoFailed(f"{_FREE_NUMBERS} tmux sessions of {repo} exist already: clean up the private tmux server")

    def _spawned(self, item: WorkItemRef) -> SessionRecord:
        record = self.store.session(item)
        if record is None:
            raise DemoFailed(f"no session was spawned for {item} (see: python -m app events --work-item {item})")
        return record

    def _wait_ready(self, target: TmuxTarget) -> None:
        # a paste that arrives before the harness reads (and asked for bracketed paste) is lost
        ready = self.plan.ready_text
        if ready is None:
            self.clock.sleep(self.plan.settle_seconds)
            self._alive(target)
        elif not self._wait_for(target, lambda text: ready in text, alive=True):
            raise DemoFailed(f"the harness in {target} did not show {ready!r} within {self.plan.ready_timeout:g}s")

    def _alive(self, target: TmuxTarget) -> None:
        if self.tmux.session_state(target) in {SessionState.DEAD, SessionState.ABSENT}:
            lines = [line for line in self.screen.text(target).split("\n") if line.strip()]
            shown = visible(" | ".join(lines[-_LAST_WORDS:])) or "(nothing)"
            raise DemoFailed(f"the harness in {target} exited; its pane shows: {shown}")

    def _delivered(self, comment: Comment) -> None:
        ledger = self.store.ledger(comment.item)
        resolved = ledger.resolved.get(comment.id) if ledger else None
        if resolved is None or resolved.kind is not Resolution.DELIVERED:
            state = resolved.kind.value if resolved else "not delivered, will be retried"
            raise DemoFailed(f"comment {comment.id} on {comment.item}: {state}")

    def _wait_for(self, target: TmuxTarget, shows: Callable[[str], bool], *, alive: bool = False) -> str:
        """The pane's text once `shows` accepts it; '' after `ready_timeout`. With `alive`, a
        harness that exits meanwhile fails at once rather than at the deadline."""
        deadline = self.clock.now().timestamp() + self.plan.ready_timeout
        while self.clock.now().timestamp() < deadline:
            text = self.screen.text(target)
            if shows(text):
                return text
            if alive:
                self._alive(target)
            self.clock.sleep(_POLL_SECONDS)
        return ""
