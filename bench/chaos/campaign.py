"""The campaign: comments stream onto several items while kills land — at random instants and aimed
off the event log and the harness's record — the poller restarted after each; then a last poller
runs until every comment is resolved."""

from __future__ import annotations

import enum
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from bench.chaos.account import Sent
from bench.chaos.records import JsonlTail, resumed
from bench.chaos.world import World, events_named
from domain.refs import WorkItemRef

AIM_SECONDS = 15.0  # an aimed kill whose moment never comes lands anyway, counted as a miss


class Aim(enum.Enum):
    RANDOM = "poller at a random instant"
    QUEUED = "poller mid-paste (right after dispatch.queued)"
    TRANSACTION = "poller around a ledger write (just after dispatch.queued or dispatch.pasted)"
    SPAWN = "poller mid-spawn (after session.spawned/respawned, before dispatch.pasted)"
    RESUME = "poller during a resume (a resumed harness starting)"
    RESUMED = "a resumed harness, once it said it is ready (while its resume is judged)"
    SERVER = "tmux server"
    HARNESS = "a harness"


WEIGHTS = {
    Aim.RANDOM: 3,
    Aim.QUEUED: 2,
    Aim.TRANSACTION: 2,
    Aim.SPAWN: 1,
    Aim.RESUME: 1,
    Aim.RESUMED: 1,
    Aim.SERVER: 1,
    Aim.HARNESS: 1,
}
TWO_KILLS = {Aim.SPAWN, Aim.RESUME, Aim.RESUMED}  # a harness (or the server) first, then the aimed one


@dataclass
class Campaign:
    world: World
    refs: list[WorkItemRef]
    rng: random.Random
    sent: list[Sent] = field(default_factory=list)
    kills: Counter[str] = field(default_factory=Counter)  # by what was killed
    aims: Counter[str] = field(default_factory=Counter)  # by aim: hit, or missed
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: threading.Event = field(default_factory=threading.Event)

    @property
    def total(self) -> int:
        return sum(self.kills.values())

    def post(self, ref: WorkItemRef) -> None:
        """A comment whose token no other comment's body holds (the counter is fixed-width)."""
        with self._lock:
            token = f"CHAOS{len(self.sent):05d}x"
            self.sent.append(Sent(self.world.comment(ref, f"please look at {token}"), token))

    def stream(self, seed: int) -> threading.Thread:
        """Comments at random intervals on random items, until the kills are done."""
        own = random.Random(seed)

        def run() -> None:
            while not self._stop.wait(own.uniform(0.05, 0.8)):
                self.post(own.choice(self.refs))

        thread = threading.Thread(target=run, name="comments", daemon=True)
        thread.start()
        return thread

    def run(self, kills: int) -> None:
        stream = self.stream(self.rng.getrandbits(32))
        try:
            while self.total < kills:
                self.ensure_poller()
                # an aim that brings a harness back first costs two kills: never more than asked
                aims = [aim for aim in WEIGHTS if kills - self.total >= (2 if aim in TWO_KILLS else 1)]
                self.step(self.rng.choices(aims, weights=[WEIGHTS[aim] for aim in aims])[0])
        finally:
            self._stop.set()
            stream.join(timeout=10)

    def ensure_poller(self) -> None:
        if not self.world.poller_running():
            self.world.start_poller()

    def step(self, aim: Aim) -> None:
        world, rng = self.world, self.rng
        if aim is Aim.SERVER:
            time.sleep(rng.uniform(0, 2))
            self.kill_server()
            return
        if aim is Aim.HARNESS:
            time.sleep(rng.uniform(0, 2))
            self.kill_harness()
            return
        hit = self.moment(aim)
        self.aims[f"{aim.value}: {'hit' if hit else 'missed'}"] += 1
        if aim is Aim.RESUMED:
            if hit:
                world.kill_pid(hit)
                self.kills["harness"] += 1
            return
        if aim is Aim.TRANSACTION:
            time.sleep(rng.uniform(0, 0.3 if world.agent.confirms else 1.3))
        world.kill_poller()
        self.kills["poller"] += 1
        world.start_poller()

    def kill_server(self) -> bool:
        if self.world.kill_server():
            self.kills["tmux server"] += 1
            return True
        return False

    def kill_harness(self, ref: WorkItemRef | None = None) -> bool:
        if self.world.kill_harness(self.rng, cwd=self.world.workdir(ref) if ref else None):
            self.kills["harness"] += 1
            return True
        return False

    def moment(self, aim: Aim) -> int:
        """Set the moment up (a comment to deliver, a harness to bring back), then wait for it:
        non-zero once it came (for RESUMED: the resumed harness's pid), 0 when it never did."""
        world, rng = self.world, self.rng
        world.events.skip()
        if aim is Aim.RANDOM:
            time.sleep(rng.uniform(0, 3))
            return 1
        ref = rng.choice(self.refs)
        if aim in {Aim.SPAWN, Aim.RESUME, Aim.RESUMED} and not self.kill_harness(ref):
            self.kill_server()
        lines = JsonlTail(world.record)
        lines.skip()
        self.post(ref)
        if aim in {Aim.RESUME, Aim.RESUMED}:
            return wait(resumed(lines, ready=aim is Aim.RESUMED), AIM_SECONDS)
        names = {
            Aim.QUEUED: ("dispatch.queued",),
            Aim.TRANSACTION: rng.choice([("dispatch.queued",), ("dispatch.pasted",)]),
            Aim.SPAWN: ("session.spawned", "session.respawned"),
        }[aim]
        return wait(lambda: int(bool(events_named(world.events.new(), *names))), AIM_SECONDS)

    def settle(self, timeout: float) -> bool:
        """A last poller runs until every comment is resolved in its item's ledger."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.ensure_poller()
            if self.resolved():
                self.world.stop_poller()  # SIGTERM: it finishes the item in hand, its notice included
                return True
            time.sleep(0.5)
        self.world.stop_poller()
        return False

    def resolved(self) -> bool:
        ledgers = self.world.ledgers(self.refs)
        done = {cid for ledger in ledgers.values() if ledger is not None for cid in ledger.resolved}
        return all(comment.comment_id in done for comment in self.sent)


def wait(moment: Callable[[], int], seconds: float) -> int:
    """What `moment` returns once it is non-zero; 0 when `seconds` pass first."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = moment()
        if found:
            return found
        time.sleep(0.005)
    return 0
