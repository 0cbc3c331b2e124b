"""Capacity of one host: N labelled items, S slots (`cluster.maxSessions`), hibernation after H
seconds (`routing.hibernateAfterSeconds`), and comments on random items as a Poisson process.

    .venv/bin/python -m bench.capacity      # 1,000 items, 20 slots, 60 comments an hour for 6 hours
    .venv/bin/python -m bench.capacity --items 100 --slots 5 --hibernate-after 300 --rate 100 --hours 2 \
        --turn 30 --seed 7                  # CI's form (tests/service/test_capacity_bench.py)
    .venv/bin/python -m bench.capacity --harness demo   # real tmux and the demo harness (bench/capacity_demo.py)
    .venv/bin/python -m bench.capacity --harness claude # real tmux and Claude Code on its stand-in (or codex)

Over the service tests' fakes (tests/service/world.py: the use cases as the container builds them
over a fake tmux, GitHub, store and receipts) on a simulated time line: a poll cycle every
`--interval` seconds, then the hibernation sweep, as the daemon runs them. Each prompt an agent is
given (its start, a resume's argv, a paste) is a turn of random length (exponential, mean `--turn`),
one after another, whose end the fake agent writes as a receipt. Warm-up: every item's agent
started once (the labelled items start at their first look, S at a time, each hibernating to let
the next in); then the comments, one every 3600 / `--rate` seconds on average, on items drawn at
random, for `--hours`; then the cycles go on until every comment is resolved.

What is printed: each comment delivered exactly once (the ledger's resolution, and how many times
its text reached an agent, on a resume's argv or pasted), the most agents alive at once (counted at
every spawn), hibernations and wakes, comment -> delivered (the ledger's confirmation) in simulated
seconds for an item whose agent was awake when the comment came and for one hibernated, and this
process's RSS after the warm-up and at the end. The RSS includes the fakes: the fake GitHub keeps
every comment (the bench empties the event and tmux call logs as it reads them).
"""

from __future__ import annotations

import argparse
import enum
import gc
import os
import random
import re
import sys
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adapters.sqlite.cluster import SingleHost
from bench.load.figures import percentile
from domain.events import Event
from domain.ledger import Resolution, Resolved
from domain.model import Comment
from domain.receipts import ReceiptKind
from domain.refs import WorkItemRef
from tests.fakes.receipts import FakeReceipts
from tests.fakes.tmux import FakePane
from tests.service.world import REPO, World

TOKEN = re.compile(r"capacity comment (\d+)\b")


@dataclass(frozen=True, slots=True)
class Scenario:
    items: int = 1000
    slots: int = 20
    hibernate_after: float | None = 600.0  # None: hibernation off
    rate_per_hour: float = 60.0
    hours: float = 6.0
    interval: float = 60.0  # polling.intervalSeconds
    turn_seconds: float = 60.0  # an agent's turn, on average
    seed: int = 1

    def said(self) -> str:
        hibernation = f"after {self.hibernate_after:g} s" if self.hibernate_after is not None else "off"
        lasting = f"{self.hours:g} h" if self.hours >= 1 else f"{self.hours * 60:g} min"
        turns = f"turns {self.turn_seconds:g} s on average" if self.turn_seconds else "each turn ended at once"
        return (
            f"{self.items} items, {self.slots} slots, hibernation {hibernation}; comments at {self.rate_per_hour:g}/h "
            f"for {lasting} on random items; a poll cycle every {self.interval:g} s, {turns}; seed {self.seed}"
        )


class Agent(enum.Enum):
    """Where a comment's item's agent stood when the comment was written."""

    AWAKE = "awake"
    HIBERNATED = "hibernated"
    UNSTARTED = "not started"  # the warm-up ended before its agent's first start


@dataclass(slots=True)
class Sent:
    comment: Comment
    agent: Agent
    resolved: Resolved | None = None

    @property
    def delivered(self) -> bool:
        return self.resolved is not None and self.resolved.kind is Resolution.DELIVERED


@dataclass(frozen=True, slots=True)
class Run:
    sent: int
    delivered_once: int
    lost: int  # never resolved as delivered, or never reached an agent
    duplicated: int  # reached an agent more than once
    most_live: int
    hibernations: int
    wakes: int  # agents resumed from hibernation
    written: Counter[Agent]  # comments, by where their item's agent stood when they were written
    latency: dict[Agent, list[float]]  # comment -> delivered, simulated seconds
    started: int  # items whose agent was started in the warm-up
    warm_up_seconds: float  # simulated
    cycles: int
    rss_warm: int
    rss_end: int
    sessions_end: int  # tmux sessions at the end, their agent alive or not
    notices: int  # slot-wait notices posted on items while the comments came
    simulated: bool = True  # the fakes' time line; else the wall clock
    harness: str = ""  # on real tmux: the agent
    # the agent's own spawn -> ready receipt: at its first start, and resumed from hibernation
    ready_first: list[float] = field(default_factory=list)
    ready_resumed: list[float] = field(default_factory=list)
    # a woken item's spawn -> the agent's receipt of the prompt on its resume's command line: the
    # agent's whole resume, ready and the comment taken (a hibernated item's comment, no slot waited for)
    resumed_to_prompt: list[float] = field(default_factory=list)
    # each such comment's comment -> confirmed less its own resume (spawn -> prompt taken)
    beyond_resume: list[float] = field(default_factory=list)
    confirmed_by: Counter[str] = field(default_factory=Counter)  # comments confirmed, by what confirmed them
    woke_at_once: list[float] = field(default_factory=list)  # comment -> confirmed, hibernated, no slot waited for
    woke_split: dict[str, list[float]] = field(default_factory=dict)  # ... step by step, whose time each is


@dataclass(eq=False)
class Simulation:
    scenario: Scenario
    world: World = field(init=False)
    sent: dict[int, Sent] = field(init=False, default_factory=dict)
    heard: Counter[int] = field(init=False, default_factory=Counter)  # comment number -> times it reached an agent
    started: set[WorkItemRef] = field(init=False, default_factory=set)  # items whose agent was given its start
    most_live: int = field(init=False, default=0)
    hibernations: int = field(init=False, default=0)
    wakes: int = field(init=False, default=0)
    cycles: int = field(init=False, default=0)
    _turns: Counter[WorkItemRef] = field(init=False, default_factory=Counter)
    _busy: dict[WorkItemRef, tuple[str, float]] = field(init=False, default_factory=dict)  # its spawn's last turn's end
    _unresolved: dict[int, Sent] = field(init=False, default_factory=dict)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)  # lanes spawn and paste at once

    def __post_init__(self) -> None:
        cluster = SingleHost(host="solo", max_sessions=self.scenario.slots)
        self.world = World(cluster=cluster, hibernate_after_seconds=self.scenario.hibernate_after)
        self.world.tmux.listeners.append(self._heard)
        self._start = self.world.clock.now()

    @property
    def receipts(self) -> FakeReceipts:
        assert isinstance(self.world.receipts, FakeReceipts)
        return self.world.receipts

    def elapsed(self) -> float:
        return (self.world.clock.now() - self._start).total_seconds()

    def live(self) -> int:
        return sum(1 for session in list(self.world.tmux.sessions.values()) if not session.all_dead)

    # --- the time line ---------------------------------------------------------------------

    def warm_up(self) -> None:
        """Cycles until every item's agent was started once, or none starts for long."""
        for number in range(1, self.scenario.items + 1):
            self.world.item(number)
        idle = 0
        while len(self.started) < self.scenario.items and idle < self._patience():
            before = len(self.started)
            self.cycle()
            self.world.clock.advance(self.scenario.interval)
            idle = 0 if len(self.started) > before else idle + 1

    def comments(self, rng: random.Random) -> None:
        """Comments on random items, a Poisson process, for the scenario's hours."""
        at, end = self.elapsed(), self.elapsed() + self.scenario.hours * 3600
        arrivals: deque[tuple[float, int]] = deque()
        while (at := at + rng.expovariate(self.scenario.rate_per_hour / 3600)) < end:
            arrivals.append((at, rng.randint(1, self.scenario.items)))
        while self.elapsed() < end:
            until = self.elapsed() + self.scenario.interval
            while arrivals and arrivals[0][0] <= until:
                written, number = arrivals.popleft()
                self.world.clock.advance(max(0.0, written - self.elapsed()))
                self.comment(WorkItemRef(REPO, number))
            self.world.clock.advance(max(0.0, until - self.elapsed()))
            self.cycle()

    def drain(self) -> None:
        """Cycles until every comment is resolved, or none is for long."""
        idle = 0
        while self._unresolved and idle < self._patience():
            before = len(self._unresolved)
            self.world.clock.advance(self.scenario.interval)
            self.cycle()
            idle = 0 if len(self._unresolved) < before else idle + 1

    def _patience(self) -> float:
        """Cycles without progress that mean none will come: a few times the longest an agent holds a slot."""
        holds = (self.scenario.hibernate_after or 0) + 10 * self.scenario.turn_seconds
        return 3 * holds / self.scenario.interval + 10

    def cycle(self) -> None:
        self.world.poll.run()
        self.world.hibernation.sweep()
        self.cycles += 1
        self._observe()

    def comment(self, ref: WorkItemRef) -> None:
        number = len(self.sent) + 1
        record = self.world.store.session(ref)
        agent = Agent.AWAKE if ref in self.started else Agent.UNSTARTED
        if record is not None and record.hibernated_at is not None:
            agent = Agent.HIBERNATED
        body = f"capacity comment {number}: please carry on"
        comment = self.world.tracker.add_comment(ref, body, author="alice", created_at=self.world.clock.now())
        self.sent[number] = self._unresolved[number] = Sent(comment, agent)

    # --- what the fakes show ---------------------------------------------------------------

    def _observe(self) -> None:
        for record in self.world.events.records:
            if record["event"] == Event.SESSION_HIBERNATED.value and record.get("ended"):
                self.hibernations += 1
            elif record["event"] == Event.SESSION_RESPAWNED.value and record.get("woke_from") == "hibernation":
                self.wakes += 1
        self.world.events.records.clear()
        self.world.tmux.calls.clear()
        self.most_live = max(self.most_live, self.live())
        for number, sent in list(self._unresolved.items()):
            ledger = self.world.store.ledger(sent.comment.item)
            resolved = ledger.resolved.get(sent.comment.id) if ledger is not None else None
            if resolved is not None:
                sent.resolved = resolved
                del self._unresolved[number]

    def _heard(self, what: str, pane: FakePane, text: str) -> None:
        """The fake agent in `pane` was given `text` (on its argv at a spawn, or pasted): a turn."""
        with self._lock:
            if what == "spawn":
                self.most_live = max(self.most_live, self.live())
            spawn = self.receipts.spawns.get(pane.mark)
            if spawn is None:
                return
            if what == "spawn":
                self.started.add(spawn.item)
            if not text:
                return
            self.heard.update(int(found) for found in TOKEN.findall(text))
            self._turns[spawn.item] += 1
            turn = random.Random(f"{self.scenario.seed}/{spawn.item}/{self._turns[spawn.item]}")
            now = self.world.clock.monotonic()
            spawned, busy_until = self._busy.get(spawn.item, (pane.mark, now))
            begins = max(now + self.receipts.ready_after, busy_until if spawned == pane.mark else now)
            ends = begins + turn.expovariate(1 / self.scenario.turn_seconds)
            self._busy[spawn.item] = (pane.mark, ends)
        self.receipts.plant(pane.mark, ReceiptKind.TURN_ENDED, after=ends - now)

    def run(self) -> Run:
        rng = random.Random(self.scenario.seed)
        self.warm_up()
        warm_up_seconds, started, rss_warm = self.elapsed(), len(self.started), rss()
        posted = len(self.world.tracker.posted)
        self.comments(rng)
        self.drain()
        notices = len(self.world.tracker.posted) - posted
        return self._figures(warm_up_seconds, rss_warm, started=started, notices=notices)

    def _figures(self, warm_up_seconds: float, rss_warm: int, *, started: int, notices: int) -> Run:
        latency: dict[Agent, list[float]] = {agent: [] for agent in Agent}
        for sent in self.sent.values():
            if sent.resolved is not None and sent.delivered:
                latency[sent.agent].append((sent.resolved.at - sent.comment.created_at).total_seconds())
        return Run(
            sent=len(self.sent),
            delivered_once=sum(1 for n, sent in self.sent.items() if sent.delivered and self.heard[n] == 1),
            lost=sum(1 for n, sent in self.sent.items() if not sent.delivered or self.heard[n] == 0),
            duplicated=sum(1 for n in self.sent if self.heard[n] > 1),
            most_live=self.most_live,
            hibernations=self.hibernations,
            wakes=self.wakes,
            written=Counter(sent.agent for sent in self.sent.values()),
            latency=latency,
            started=started,
            warm_up_seconds=warm_up_seconds,
            cycles=self.cycles,
            rss_warm=rss_warm,
            rss_end=rss(),
            sessions_end=len(self.world.tmux.sessions),
            notices=notices,
        )


def rss() -> int:
    """This process's resident memory in bytes, after a collection (Linux's /proc)."""
    gc.collect()
    pages = int(Path("/proc/self/statm").read_text(encoding="ascii").split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


def run(scenario: Scenario) -> Run:
    return Simulation(scenario).run()


def report(scenario: Scenario, figures: Run) -> str:
    mib = 1024 * 1024
    took = (
        f"{figures.warm_up_seconds / 3600:.1f} simulated h" if figures.simulated else f"{figures.warm_up_seconds:.0f} s"
    )
    form = "over the fakes" if figures.simulated else f"on real tmux with {figures.harness}"
    whose = "RSS" if figures.simulated else "the daemon's RSS"
    lines = [
        f"capacity {form}: {scenario.said()}",
        f"  warm-up: {figures.started} of {scenario.items} items' agents started once, in {took}",
        f"  comments: {figures.sent} sent, {figures.delivered_once} delivered once, {figures.lost} lost, "
        f"{figures.duplicated} duplicated",
        f"  live agents: at most {figures.most_live} (slots {scenario.slots})",
        f"  hibernations {figures.hibernations}, wakes {figures.wakes}",
    ]
    for agent in Agent:
        seconds = figures.latency[agent]
        if agent is Agent.UNSTARTED and not figures.written[agent]:
            continue
        lines.append(
            f"  comment -> delivered, agent {agent.value + ':':<12} {len(seconds):>5} of {figures.written[agent]:>5} "
            f"delivered   p50 {percentile(seconds, 0.5):7.1f} s   p99 {percentile(seconds, 0.99):7.1f} s"
        )
    lines += _readiness(figures)
    lines += [
        f"  {whose} after warm-up {figures.rss_warm / mib:.1f} MiB, at the end {figures.rss_end / mib:.1f} MiB, "
        f"end / warm-up {figures.rss_end / figures.rss_warm:.2f}",
        f"  at the end: {figures.sessions_end} tmux sessions kept (their agents alive or not); {figures.notices} "
        f"slot-wait notices posted on items while the comments came; {figures.cycles} cycles",
    ]
    return "\n".join(lines)


def _readiness(figures: Run) -> list[str]:
    """On real tmux: what confirmed the comments, the agent's own spawn -> ready time, a hibernated
    item's comment -> confirmed step by step (the daemon's time and the agent's), and whether it was
    confirmed within its agent's resume time plus one second (p99)."""
    if figures.simulated:
        return []
    by = ", ".join(f"{count} by {what}" for what, count in sorted(figures.confirmed_by.items()))
    lines = [f"  confirmed (dispatch.succeeded): {by or 'none'}"]
    for what, seconds in (("first start", figures.ready_first), ("resume", figures.ready_resumed)):
        lines.append(
            f"  spawn -> ready receipt, {what + ':':<12} {len(seconds):>5} spawns            "
            f"p50 {percentile(seconds, 0.5):7.1f} s   p99 {percentile(seconds, 0.99):7.1f} s"
        )
    woken, resumes = figures.woke_at_once, figures.ready_resumed
    lines.append(
        f"  comment -> confirmed, hibernated and no slot waited for: {len(woken)} comments   "
        f"p50 {percentile(woken, 0.5):7.1f} s   p99 {percentile(woken, 0.99):7.1f} s"
    )
    for step, seconds in figures.woke_split.items():
        p50, p99 = percentile(seconds, 0.5), percentile(seconds, 0.99)
        lines.append(f"    {step}: {len(seconds)}   p50 {p50:5.2f} s   p99 {p99:5.2f} s")
    taken = figures.resumed_to_prompt
    lines.append(
        f"  spawn -> prompt receipt, resume: {len(taken):>5} spawns            "
        f"p50 {percentile(taken, 0.5):7.1f} s   p99 {percentile(taken, 0.99):7.1f} s"
    )
    for resume, seconds in (("spawn -> ready", resumes), ("spawn -> prompt taken", taken)):
        if woken and seconds:
            bound = percentile(seconds, 0.99) + 1.0
            met = "met" if percentile(woken, 0.99) <= bound else "not met"
            lines.append(
                f"  goal, the resume counted {resume}: such a comment confirmed within its p99 + 1 s = "
                f"{bound:.1f} s, at p99: {met}"
            )
    if beyond := figures.beyond_resume:
        p50, p99 = percentile(beyond, 0.5), percentile(beyond, 0.99)
        met = "met" if p99 <= 1.0 else "not met"
        lines.append(
            f"  goal, each comment against its own resume (spawn -> prompt taken): confirmed within it + 1 s: "
            f"{len(beyond)} comments, beyond it p50 {p50:.2f} s, p99 {p99:.2f} s: {met}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    from bench.capacity_demo import HARNESSES

    forms = "the service tests' fakes, or real tmux with the demo harness or a real agent (smaller defaults)"
    parser.add_argument("--harness", choices=("fakes", *HARNESSES), default="fakes", help=forms)
    parser.add_argument("--items", type=int, help="open labelled items")
    parser.add_argument("--slots", type=int, help="cluster.maxSessions")
    parser.add_argument("--hibernate-after", type=float, help="routing.hibernateAfterSeconds (0: off)")
    parser.add_argument("--rate", type=float, help="comments an hour")
    parser.add_argument("--hours", type=float, help="hours of comments")
    parser.add_argument("--interval", type=float, help="polling.intervalSeconds")
    parser.add_argument("--turn", type=float, help="an agent's turn, seconds on average (the fakes' agent)")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--keep", action="store_true", help="on real tmux: keep the run's folder (printed)")
    args = parser.parse_args()
    scenario = _scenario(args)
    print(f"capacity: {scenario.said()}", flush=True)
    started = time.monotonic()
    if args.harness != "fakes":
        from bench import capacity_demo

        figures = capacity_demo.run(scenario, args.harness, keep=args.keep)
    else:
        figures = run(scenario)
    print(report(scenario, figures))
    print(f"  (took {time.monotonic() - started:.0f} s)")


def _scenario(args: argparse.Namespace) -> Scenario:
    """The form's defaults, each argument given over them."""
    from bench.capacity_demo import DEMO, REAL

    default = {"fakes": Scenario(), "demo": DEMO}.get(args.harness, REAL)
    given = {
        "items": args.items, "slots": args.slots, "rate_per_hour": args.rate, "hours": args.hours,
        "interval": args.interval, "turn_seconds": args.turn, "seed": args.seed,
    }  # fmt: skip
    scenario = replace(default, **{name: value for name, value in given.items() if value is not None})
    if args.hibernate_after is not None:
        scenario = replace(scenario, hibernate_after=args.hibernate_after or None)
    return scenario


if __name__ == "__main__":
    sys.modules.setdefault("bench.capacity", sys.modules[__name__])  # bench.capacity_demo shares these types
    main()
