"""The-loop's own poll cycle over real Claude Code: tests/service/world.py's World on the Claude rig's
tmux server, with real receipts (Claude's hooks writing files) and real trust (the rig's ~/.claude.json)."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from adapters.agents.receipt_line import SUFFIX
from adapters.agents.usage import harness_usage
from adapters.clock import SystemClock
from adapters.harnesses import usage_readers
from adapters.harnesses.claude.hooks import receipt_channel
from adapters.harnesses.claude.trust import ClaudeTrust
from adapters.receipts.files import FileReceipts
from adapters.tmux.adapter import ShTmux
from app.config.settings import Settings
from domain.asks import CLOCK_MARGIN
from domain.events import Event, Level
from domain.ledger import Resolution
from domain.model import HarnessSpec, Reaction
from domain.ports import UsagePort
from domain.receipts import HarnessState, harness_state
from domain.refs import WorkItemRef
from tests.claude.rig import ClaudeRig
from tests.fakes.clock import FakeClock
from tests.fakes.events import RecordingEvents
from tests.service.world import World
from tests.tmux_support import wait_for

Hook = dict[str, Any]


def claude_receipts(root: Path, *, ask_wait_seconds: float = 0.0) -> FileReceipts:
    """The receipt folders under `root` handing a Claude spawn its hooks, as the container's do;
    `ask_wait_seconds`: how long its PermissionRequest hook waits for an answer."""
    return FileReceipts(root, channels={"claude": partial(receipt_channel, ask_wait_seconds=ask_wait_seconds)})


class WallClock(FakeClock):
    """The machine's time (the receipts carry it): a wait really waits, and World's `advance` is
    time that has passed already."""

    def __init__(self) -> None:
        self._system = SystemClock()
        super().__init__(self._system.now())

    def now(self) -> datetime:
        return self._system.now()

    def sleep(self, seconds: float) -> None:
        self._system.sleep(seconds)

    def advance(self, seconds: float) -> datetime:
        return self.now()

    def epoch(self) -> float:
        return self._system.epoch()


class RunningWallClock(WallClock):
    """The machine's time, its monotonic reading too: a wait with a deadline ends as the daemon's
    would (a paste the agent never took times out and is tried again), for an agent that confirms a
    paste at once even while busy. (A WallClock's monotonic reading stands still: there a deadline
    never passes, and only a receipt or a dead pane ends a wait.)"""

    def monotonic(self) -> float:
        return self._system.monotonic()


class TimedEvents(RecordingEvents):
    """Each event also carries `at_ns`: when it was emitted, on the clock the hooks name their files by."""

    def emit(self, event: Event, *, level: Level = Level.INFO, source: str = "poller", **fields: Any) -> None:
        super().emit(event, level=level, source=source, at_ns=time.time_ns(), **fields)


def builtin_spec(name: str, binary: Path | str, **keys: Any) -> HarnessSpec:
    """The built-in harness `name` as the-loop's settings make it, `binary` (and `keys`) laid over it."""
    entry = {"binary": str(binary), **keys}
    return Settings.model_validate({"routing": {"harnesses": {name: entry}}}).harness_spec(name)


def claude_spec(binary: Path | str, **keys: Any) -> HarnessSpec:
    return builtin_spec("claude", binary, **keys)


def real_world(tmux: Any, spec: HarnessSpec, base: Path, **options: Any) -> World:
    """World over a real tmux, on the machine's clock, spawning `spec` in folders under `base/work`,
    its turns' usage read from the agent's own records as the container reads them."""
    return World(
        tmux=tmux,
        harness=spec.name,
        harnesses={spec.name: spec},
        events=TimedEvents(),
        workdir=str(base / "work" / "{slug}"),
        session_ids=lambda: str(uuid.uuid4()),
        **{"clock": WallClock(), "usage": agent_usage(spec), **options},
    )


def agent_usage(spec: HarnessSpec) -> UsagePort:
    """Its turns' usage, read from the agent's own records as the container reads them."""
    return harness_usage({spec.name: spec}, usage_readers())


def resumed_after_a_kill(world: World, ref: WorkItemRef, conversation: str, standin: Any, earlier: str) -> None:
    """The comment after the item's session was killed resumes `conversation`, is confirmed by
    receipt, and the model gets the conversation so far (`earlier` among it). `standin`: the model
    API's stand-in, reset since the kill."""
    comment = world.comment(ref, "carry on after the kill")
    world.cycle()
    # what the respawn did, said when it did something else (a resume judged failed names its reason)
    story = [
        {k: v for k, v in e.items() if k in {"event", "resumed", "reason", "screen", "spawn_id"}}
        for e in world.events.records
        if e.get("event", "").startswith("session.")
    ]
    confirmed = [e for e in world.events.named(Event.DISPATCH_SUCCEEDED) if e.get("comment_id") == comment.id]
    assert confirmed[0]["confirmed_by"] == "receipt", story
    assert world.events.named(Event.SESSION_RESPAWNED)[0]["resumed"] is True, story
    assert world.record(ref).harness_session_id == conversation
    ready = [r for r in world.receipts.read(ref, world.record(ref).spawn_id) if r.source == "resume"]
    assert [r.conversation for r in ready] == [conversation]
    wait_for(standin.turns, what="the resumed turn")
    assert earlier in " ".join(standin.turns()[0].user_texts())


def said(standin: Any, text: str) -> bool:
    """Some model request to `standin` carried `text` from the user."""
    return any(text in " ".join(t.user_texts()) for t in standin.turns())


def a_comment_confirmed(world: World, ref: WorkItemRef, standin: Any, text: str) -> None:
    """A comment to a ready agent is confirmed by its receipt and reaches the model."""
    comment = world.comment(ref, text)
    world.cycle()
    confirmed = [e for e in world.events.named(Event.DISPATCH_SUCCEEDED) if e.get("comment_id") == comment.id]
    assert confirmed[0]["confirmed_by"] == "receipt"
    wait_for(lambda: said(standin, text), what="the turn")


def a_comment_while_busy(world: World, ref: WorkItemRef, standin: Any, *, release_after: float = 0.0) -> None:
    """A comment pasted while the agent's turn is held by `standin` is confirmed by receipt, as the
    one before is, and reaches the model. `release_after`: the held turn ends that many seconds
    after the second paste begins (for an agent that takes a queued message only after its turn);
    0: once both are confirmed."""
    from tests.openai_standin.server import Busy, Say  # the stand-ins share their script

    # the start's turn ends first: a request it still makes would take the busy script meant for this
    # comment's (the module's tests run in any order, on several workers)
    wait_for(lambda: idle(world, ref), timeout=60, what="the agent idle after its earlier turns")
    standin.reset()
    standin.script(Busy(60, then=Say("first done")))
    first = world.comment(ref, "keep the model busy")
    world.cycle()
    wait_for(lambda: said(standin, "keep the model busy"), timeout=30, what="the model request held")
    second = world.comment(ref, "arrives while busy")
    if release_after:
        threading.Timer(release_after, standin.release).start()
    world.cycle()
    for comment in (first, second):
        confirmed = [e for e in world.events.named(Event.DISPATCH_SUCCEEDED) if e.get("comment_id") == comment.id]
        assert confirmed[0]["confirmed_by"] == "receipt"
    standin.release()
    wait_for(lambda: said(standin, "arrives while busy"), timeout=30, what="the comment sent while busy")


def idle(world: World, ref: WorkItemRef) -> bool:
    """The item's harness is idle by its receipts: it has ended every turn it was given."""
    record = world.record(ref)
    return harness_state(world.receipts.read(ref, record.spawn_id)) is HarnessState.IDLE


def exits_at_once(world: World, number: int) -> str:
    """A comment on item `number`, whose harness exits at once, through every attempt: each fails,
    one notice is posted, never 🎉. The comment's id."""
    ref = world.item(number, author="bob")  # not authorized: only the comment spawns
    world.cycle()
    comment = world.comment(ref, "never reaches an agent")
    for _ in range(world.max_retries + 1):  # the last cycle finds nothing left to try
        world.cycle()
    failed = [e for e in world.events.named(Event.DISPATCH_FAILED) if e.get("comment_id") == comment.id]
    assert [e["will_retry"] for e in failed] == [True, True, False]
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.ABANDONED
    assert len(world.tracker.posted) == 1 and "was **not delivered**" in world.tracker.posted[0][1]
    reactions = [r for c, r in world.tracker.reactions if c == comment.id]
    assert Reaction.FAILED in reactions and Reaction.SUCCEEDED not in reactions
    assert world.events.named(Event.DISPATCH_SUCCEEDED) == []
    return comment.id


@dataclass
class ClaudeLoop:
    """Worlds over one Claude rig; every world's receipts and spawn folders live under `base`."""

    rig: ClaudeRig
    base: Path

    @property
    def workdirs(self) -> Path:
        """Outside the rig's trusted root: Claude has never been told to trust any folder in it."""
        return self.base / "work"

    def world(
        self,
        spec: HarnessSpec | None = None,
        *,
        tmux: ShTmux | None = None,
        ask_wait_seconds: float = 0.0,
        **options: Any,
    ) -> World:
        """`ask_wait_seconds`: how long its PermissionRequest hook waits for an answer from
        the item; 0, as before, leaves every dialog to the pane."""
        spec = spec or claude_spec(self.rig.binary)
        return World(
            tmux=tmux or self.rig.adapter(),  # type: ignore[arg-type]
            harness=spec.name,
            harnesses={spec.name: spec},
            clock=WallClock(),
            events=TimedEvents(),
            workdir=str(self.workdirs / "{slug}"),
            receipts=claude_receipts(self.base / "receipts", ask_wait_seconds=ask_wait_seconds),
            ask_wait_seconds=ask_wait_seconds,
            trust_port=ClaudeTrust(self.rig.home.config_file),
            session_ids=lambda: str(uuid.uuid4()),
            **{"usage": agent_usage(spec), **options},
        )

    def hooks(self, world: World, ref: WorkItemRef) -> list[Hook]:
        """The hook JSON of the item's current spawn, in the order the hooks ran."""
        folder = self.base / "receipts" / ref.slug / world.record(ref).spawn_id
        paths = sorted(folder.glob(f"*{SUFFIX}")) if folder.is_dir() else []
        return [json.loads(path.read_text(encoding="utf-8")) for path in paths]

    def wait_hook(
        self, world: World, ref: WorkItemRef, event: str, where: Callable[[Hook], bool] = lambda _: True, **wait: Any
    ) -> Hook:
        def found() -> Hook | None:
            return next((h for h in self.hooks(world, ref) if h["hook_event_name"] == event and where(h)), None)

        return wait_for(found, what=f"a {event} hook", **{"timeout": 30.0, **wait})  # type: ignore[no-any-return]

    def screen(self, world: World, ref: WorkItemRef) -> str:
        return self.rig.tmux.run("capture-pane", "-p", "-t", world.record(ref).pane_id, check=False)

    def pid(self, world: World, ref: WorkItemRef) -> int:
        shown = self.rig.tmux.run("display-message", "-p", "-t", world.record(ref).pane_id, "#{pane_pid}", check=False)
        return int(shown.strip() or 0)

    def crash(self, world: World, ref: WorkItemRef) -> None:
        """SIGKILL the harness (the pane's process: the spawn wrapper execs it); its pane stays, and
        this returns once tmux says it is dead (a probe before that still finds it live)."""
        pid, pane = self.pid(world, ref), world.record(ref).pane_id
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: gone(pid), what=f"Claude {pid} killed")
        dead = lambda: self.rig.tmux.run("display-message", "-p", "-t", pane, "#{pane_dead}", check=False)  # noqa: E731
        wait_for(lambda: dead().strip() == "1", what=f"tmux to see pane {pane} dead")

    def end(self, world: World, ref: WorkItemRef) -> None:
        """`tmux kill-session`, then wait until Claude has exited (it rewrites ~/.claude.json as it goes)."""
        pid = self.pid(world, ref) if world.store.session(ref) else 0
        self.rig.tmux.run("kill-session", "-t", ref.target.exact, check=False)
        if pid:
            wait_for(lambda: gone(pid), what=f"Claude {pid} exited")


def gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def answerable(world: World, ref: WorkItemRef) -> None:
    """Until an answer written now counts: `CLOCK_MARGIN` after the last request was posted."""
    posted = wait_for(
        lambda: [request.posted_at for request in world.record(ref).requests if not request.pending],
        what="the request posted",
    )
    last = max(posted)
    wait_for(lambda: world.clock.now() >= last + CLOCK_MARGIN, what="an answer's margin after the request")
