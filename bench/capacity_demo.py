"""The capacity bench on real processes (`python -m bench.capacity --harness demo|claude|codex`): the
daemon (`poll`, its own process, SQLite) with the sandbox tracker, real tmux on a private server,
and the agent under the kill campaign's wrapper (bench/chaos/wrapper.py), which records when each
agent started and ended. The agent is the demo harness (`app.demo.harness`: ready at once, each
prompt's turn ended as soon as it is shown), or a real one offline on its model API's stand-in, set
up by its kill-campaign plug (bench/chaos/agents.py `AGENTS`). Wall-clock time: the hibernation
sweep runs every 15 s (the daemon's), the poll cycle every `--interval` seconds.

Counted as in the fakes form: each comment's ledger resolution (SQLite, at the end) and how many
times its text reached an agent, by the agent's own records as the kill campaign counts them (its
hooks' prompt receipts; a real agent's model requests too); the most agents alive at once (the
wrapper's start and end lines, in order); hibernations and wakes, comment -> confirmed
(`dispatch.succeeded`) and each spawn's own ready time (`session.ready`'s spawn -> ready receipt),
from the event log; a woken item's comment -> confirmed step by step (`WAKE_STEPS`), from the event
log and the times the agent's hooks wrote its receipts; the daemon's RSS after the warm-up and at
the end."""

from __future__ import annotations

import json
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.capacity import Agent, Run, Scenario, Sent
from bench.chaos.account import Taken
from bench.chaos.agents import AGENTS, RealAgent
from bench.chaos.agents import Agent as ChaosAgent
from bench.chaos.config import AUTHOR
from bench.chaos.records import HarnessRun, JsonlTail
from bench.chaos.world import World

DEMO = Scenario(items=16, slots=4, hibernate_after=5.0, rate_per_hour=720.0, hours=2 / 60, interval=1.0, turn_seconds=0)
# a real agent resumes in seconds and holds a few hundred MiB: a form for two cores
REAL = Scenario(items=12, slots=3, hibernate_after=5.0, rate_per_hour=360.0, hours=3 / 60, interval=1.0, turn_seconds=0)
HARNESSES = ("demo", *(name for name in AGENTS if name != "sim"))  # the simulator records itself: not a plug here


@dataclass
class DemoAgent(RealAgent):
    """The demo harness as the kill campaign's plug: under the wrapper, its receipts tapped; no model."""

    name: str = "demo"  # the built-in: its session and resume arguments, its receipts
    settle_seconds: float = 120.0

    def setup(self, root: Path, record: Path) -> tuple[dict[str, Any], dict[str, str]]:
        self.binary = Path(sys.executable)
        return self.wrapped(root, record, "-m", "app.demo.harness"), {}

    def taken(self, runs: list[HarnessRun]) -> Taken:
        """Its prompt receipts, all of them: they name no conversation."""
        prompts = [text for _conversation, text in self.hooks.prompts] if self.hooks else []
        return lambda token: {"demo": n} if (n := sum(text.count(token) for text in prompts)) else {}

    def notes(self, tokens: Iterable[str]) -> list[str]:
        return []  # its hooks are all there is to read


def agent_for(harness: str) -> ChaosAgent:
    """The plug that sets `harness` up: the demo harness, or a real agent as the kill campaign runs it."""
    return DemoAgent() if harness == "demo" else AGENTS[harness]()


@dataclass
class TmuxRun:
    scenario: Scenario
    world: World
    agent: ChaosAgent
    events: JsonlTail = field(init=False)
    hibernated: set[str] = field(init=False, default_factory=set)  # items whose agent is hibernated now
    started: set[str] = field(init=False, default_factory=set)  # items whose agent ever started
    woken: set[str] = field(init=False, default_factory=set)  # items whose last spawn was a wake, not yet ready
    counts: Counter[str] = field(init=False, default_factory=Counter)  # events, by name
    confirmed: dict[str, tuple[datetime, str]] = field(init=False, default_factory=dict)  # comment id -> when, by what
    ready_first: list[float] = field(init=False, default_factory=list)  # spawn -> ready receipt, first starts
    ready_resumed: list[float] = field(init=False, default_factory=list)  # ... and resumes from hibernation
    # item -> each resume's session.ready: when it was said, and its spawn -> ready receipt seconds
    resumes: dict[str, list[tuple[datetime, float]]] = field(init=False, default_factory=dict)
    # a woken item's spawn -> the agent's receipt of the prompt its resume was given on its command line
    resumed_to_prompt: list[float] = field(init=False, default_factory=list)
    # ... and that comment -> confirmed less its own resume: the poll's wait and the daemon's time
    beyond_resume: list[float] = field(init=False, default_factory=list)
    waits: dict[str, list[datetime]] = field(init=False, default_factory=dict)  # item -> when it waited for a slot
    queued: dict[str, datetime] = field(init=False, default_factory=dict)  # comment id -> its first dispatch.queued
    sent: dict[int, Sent] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.events = JsonlTail(self.world.state / "logs" / "events.jsonl")
        config = json.loads(self.world.config.read_text(encoding="utf-8"))
        config["cluster"] = {"maxSessions": self.scenario.slots}
        config["polling"]["intervalSeconds"] = max(1, round(self.scenario.interval))
        if self.scenario.hibernate_after is not None:
            config["routing"]["hibernateAfterSeconds"] = self.scenario.hibernate_after
        self.world.config.write_text(json.dumps(config, indent=1), encoding="utf-8")

    def run(self) -> Run:
        refs = self.world.items(self.scenario.items)
        self.world.start_poller()
        began = time.monotonic()
        patience = 3 * ((self.scenario.hibernate_after or 0) + 30) + 30
        _until(lambda: len(self._read()) >= self.scenario.items, patience, what="every item's agent started")
        warm_up, rss_warm = time.monotonic() - began, self._rss()
        posted = len(self.world.notices())
        self._comments(refs, random.Random(self.scenario.seed))
        resolved = _until(lambda: self._resolved(refs), 3 * patience, what="every comment resolved")
        return self._figures(resolved, warm_up, rss_warm, notices=len(self.world.notices()) - posted)

    def _comments(self, refs: list[Any], rng: random.Random) -> None:
        end = time.monotonic() + self.scenario.hours * 3600
        while (at := time.monotonic() + rng.expovariate(self.scenario.rate_per_hour / 3600)) < end:
            time.sleep(max(0.0, at - time.monotonic()))
            ref = refs[rng.randrange(len(refs))]
            self._read()
            agent = Agent.HIBERNATED if str(ref) in self.hibernated else Agent.AWAKE
            if str(ref) not in self.started:
                agent = Agent.UNSTARTED
            number = len(self.sent) + 1
            comment = self.world.sandbox.add_comment(ref, f"{token(number)} please carry on", AUTHOR)
            self.sent[number] = Sent(comment, agent)
        time.sleep(max(0.0, end - time.monotonic()))

    def _read(self) -> set[str]:
        """The event log since the last read: which items' agents started, hibernated, woke, were
        ready, and which comments were confirmed."""
        for event in self.events.new():
            name, item = event.get("event"), str(event.get("work_item"))
            self.counts[str(name)] += 1
            if name in {"session.spawned", "session.respawned"}:
                self.started.add(item)
                self.hibernated.discard(item)
                woke = event.get("woke_from") == "hibernation"
                self.counts["woken"] += woke
                (self.woken.add if woke else self.woken.discard)(item)
                self.counts["first"] += name == "session.spawned"
            elif name == "session.ready" and isinstance(seconds := event.get("seconds"), (int, float)):
                if item in self.woken:
                    self.ready_resumed.append(seconds)
                    at = datetime.fromisoformat(str(event["ts"]))
                    self.resumes.setdefault(item, []).append((at, float(seconds)))
                elif event.get("source") == "startup":
                    self.ready_first.append(seconds)
                self.woken.discard(item)
            elif name == "session.hibernated" and event.get("ended"):
                self.hibernated.add(item)
                self.counts["hibernated"] += 1
            elif name == "dispatch.queued" and event.get("comment_id"):
                self.queued.setdefault(str(event["comment_id"]), datetime.fromisoformat(str(event["ts"])))
            elif name == "dispatch.succeeded" and event.get("comment_id"):
                at = datetime.fromisoformat(str(event["ts"]))
                self.confirmed[str(event["comment_id"])] = (at, str(event.get("confirmed_by")))
            elif name == "cluster.slot_waiting":
                self.waits.setdefault(item, []).append(datetime.fromisoformat(str(event["ts"])))
        return self.started

    def _resolved(self, refs: list[Any]) -> dict[str, Any] | None:
        ledgers = self.world.ledgers(refs)
        found = {}
        for sent in self.sent.values():
            ledger = ledgers.get(sent.comment.item)
            resolved = ledger.resolved.get(sent.comment.id) if ledger is not None else None
            if resolved is None:
                return None
            found[sent.comment.id] = resolved
        return found

    def _rss(self) -> int:
        poller = self.world.poller
        assert poller is not None
        for line in Path(f"/proc/{poller.pid}/status").read_text(encoding="ascii").splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0

    def _figures(self, resolved: dict[str, Any], warm_up: float, rss_warm: int, *, notices: int) -> Run:
        self._read()
        heard = self.agent.taken(self.world.runs())  # as the kill campaign counts: the agent's own records
        times = {number: sum(heard(token(number)).values()) for number in self.sent}
        latency: dict[Agent, list[float]] = {agent: [] for agent in Agent}
        slot_free: list[float] = []
        split: dict[str, list[float]] = {step: [] for step in WAKE_STEPS}
        said = AgentSaid.read(self.world.record)
        for number, sent in self.sent.items():
            sent.resolved = resolved[sent.comment.id]
            if sent.comment.id in self.confirmed:
                at, _by = self.confirmed[sent.comment.id]
                latency[sent.agent].append(seconds := (at - sent.comment.created_at).total_seconds())
                waits = self.waits.get(str(sent.comment.item), [])
                if sent.agent is Agent.HIBERNATED and not any(sent.comment.created_at <= w <= at for w in waits):
                    slot_free.append(seconds)
                    self._split(split, said, number, at)
        sessions = self.world.tmux("list-sessions", "-F", "#{session_name}").stdout.split()
        return Run(
            sent=len(self.sent),
            delivered_once=sum(1 for n, sent in self.sent.items() if sent.delivered and times[n] == 1),
            lost=sum(1 for n, sent in self.sent.items() if not sent.delivered or times[n] == 0),
            duplicated=sum(1 for n in self.sent if times[n] > 1),
            most_live=most_alive(self.world.record),
            hibernations=self.counts["hibernated"],
            wakes=self.counts["woken"],
            written=Counter(sent.agent for sent in self.sent.values()),
            latency=latency,
            started=self.counts["first"],
            warm_up_seconds=warm_up,
            cycles=self.counts["poll.cycle"],
            rss_warm=rss_warm,
            rss_end=self._rss(),
            sessions_end=len(sessions),
            notices=notices,
            simulated=False,
            harness=self.agent.name,
            ready_first=self.ready_first,
            ready_resumed=self.ready_resumed,
            resumed_to_prompt=self.resumed_to_prompt,
            beyond_resume=self.beyond_resume,
            woke_at_once=slot_free,
            woke_split=split,
            confirmed_by=Counter(by for _at, by in self.confirmed.values()),
        )

    def _split(self, split: dict[str, list[float]], said: AgentSaid, number: int, confirmed: datetime) -> None:
        """A woken item's comment -> confirmed, step by step (`WAKE_STEPS`): the daemon's and the agent's."""
        comment = self.sent[number].comment
        queued = self.queued.get(comment.id)
        prompt = next(((pid, at) for pid, text, at in said.prompts if token(number) in text), None)
        if queued is None or prompt is None:
            return
        pid, took = prompt
        ready = said.ready.get(pid)
        steps = [queued - comment.created_at, took - queued, took - ready if ready else None, confirmed - took]
        resumed = [seconds for at, seconds in self.resumes.get(str(comment.item), []) if at <= confirmed]
        if ready and resumed:  # its resume counted until it took the prompt: spawn -> ready, then ready -> prompt
            resume = resumed[-1] + (took - ready).total_seconds()
            self.resumed_to_prompt.append(resume)
            self.beyond_resume.append((confirmed - comment.created_at).total_seconds() - resume)
        for step, span in zip(WAKE_STEPS, steps, strict=True):
            if span is not None:
                split[step].append(span.total_seconds())


# a woken item's comment -> confirmed, step by step: whose time each is
WAKE_STEPS = (
    "comment -> dispatch.queued (the poll wait, the cycle)",
    "dispatch.queued -> the agent's prompt receipt (the daemon starts it, it resumes and takes the prompt)",
    "  of which the agent's ready receipt -> its prompt receipt",
    "the agent's prompt receipt -> dispatch.succeeded (the daemon sees it, records it)",
)


@dataclass(frozen=True, slots=True)
class AgentSaid:
    """What the agents' hooks said, as the tap recorded it with when each was written: each agent's
    (by pid) first ready receipt, and every prompt receipt."""

    ready: dict[int, datetime]
    prompts: list[tuple[int, str, datetime]]

    @classmethod
    def read(cls, record: Path) -> AgentSaid:
        ready: dict[int, datetime] = {}
        prompts: list[tuple[int, str, datetime]] = []
        for line in JsonlTail(record).new():
            at, pid = line.get("at"), line.get("pid")
            if not isinstance(at, str) or not isinstance(pid, int):
                continue
            if line.get("kind") == "ready":
                ready.setdefault(pid, datetime.fromisoformat(at))
            elif line.get("kind") == "prompt":
                prompts.append((pid, str(line.get("text", "")), datetime.fromisoformat(at)))
        return cls(ready, prompts)


def token(number: int) -> str:
    """What only comment `number`'s body holds (the colon: `comment 1` is in `comment 12`)."""
    return f"capacity comment {number}:"


def most_alive(record: Path) -> int:
    """The most agents running at once, from the wrapper's lines in the order they were written:
    a start counts until the agent's first end (its signal or its exit)."""
    alive: set[int] = set()
    most = 0
    for line in JsonlTail(record).new():
        pid, kind = line.get("pid"), line.get("kind")
        if kind == "start":
            alive.add(pid)  # type: ignore[arg-type]
            most = max(most, len(alive))
        elif kind in {"signal", "exit"}:
            alive.discard(pid)  # type: ignore[arg-type]
    return most


def _until(found: Callable[[], Any], seconds: float, *, what: str) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := found():
            return value
        time.sleep(0.5)
    raise SystemExit(f"capacity (real tmux): not within {seconds:.0f} s: {what}")


def run(scenario: Scenario, harness: str = "demo", *, keep: bool = False) -> Run:
    """`keep`: leave the run's folder (the event log, the agents' records) and say where."""
    if shutil.which("tmux") is None:
        raise SystemExit("capacity (real tmux): tmux is not installed")
    root = Path(tempfile.mkdtemp(prefix="the-loop-capacity-"))
    agent = agent_for(harness)
    world = World(root, agent)
    try:
        return TmuxRun(scenario, world, agent).run()
    finally:
        world.close()
        if keep:
            print(f"  kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
