"""One agent's run: the daemon (`poll`, its own process, SQLite) with the sandbox tracker and a
`pricing.models` entry for the stand-in's model, the real agent on real tmux offline on its stand-in
(the kill campaign's world and plug, bench/chaos/), one item, its start's turn and then one comment
at a time, each posted once the last one's turn has ended. Each turn's requests are scripted before
its prompt goes in, and the stand-in's replies since are the turn's (a side request's reply apart)."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adapters.agents.receipt_line import SUFFIX
from adapters.receipts.hook_json import receipt_of
from adapters.sqlite.store import SqliteStateStore
from bench.chaos.agents import Claude, Codex, RealAgent
from bench.chaos.records import JsonlTail
from bench.chaos.world import World
from bench.costs.plan import NOTES, ClaudeDialect, CodexDialect, Dialect, turn
from domain.receipts import ReceiptKind
from domain.refs import WorkItemRef
from domain.spending import TurnCost
from domain.usage import TurnUsage, summed
from tests.openai_standin.server import Say, Usage

TURN_SECONDS = 240.0  # a spawn's first turn included, on a busy machine
TITLE = (77, 5)  # in / out of the task title Codex asks for beside each prompt (in no record of its own)


@dataclass
class CodexTitled(Codex):
    """The kill campaign's Codex plug whose stand-in answers the task title off the script."""

    def setup(self, root: Path, record: Path) -> tuple[dict[str, Any], dict[str, str]]:
        found = super().setup(root, record)
        self.standin.side = Say("A task title", usage=Usage(*TITLE))
        return found


AGENTS: dict[str, tuple[Callable[[], RealAgent], Callable[[], Dialect]]] = {
    "claude": (Claude, ClaudeDialect),
    "codex": (CodexTitled, CodexDialect),
}


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn: what its requests were served, and what the-loop recorded of it."""

    label: str  # "comment 3"
    comment_id: str
    served: tuple[TurnUsage, ...]  # each of its requests' replies, in order
    recorded: TurnCost | None  # the store's row (None: no row)
    said: dict[str, Any] = field(default_factory=dict)  # its `session.turn_finished`

    @property
    def unknown(self) -> str:
        """Why its usage is unknown, as its event says ("": known)."""
        return str(self.said.get("usage_reason", ""))

    @property
    def served_total(self) -> TurnUsage:
        return summed(self.served) or TurnUsage(0, 0, 0, 0)


@dataclass
class AgentRun:
    harness: str
    dialect: Dialect
    turns: list[Turn] = field(default_factory=list)
    side: list[TurnUsage] = field(default_factory=list)  # replies to requests that are not a turn's
    problems: list[str] = field(default_factory=list)  # turns that never ended, a poller that died


def run(harness: str, comments: int, seed: int, root: Path) -> AgentRun:
    plug, dialect = AGENTS[harness][0](), AGENTS[harness][1]()
    world = World(root, plug)
    found = AgentRun(harness, dialect)
    rng = random.Random(f"{seed}:{harness}")
    try:
        ref, folder = _arranged(world, dialect)
        events = Events(world, JsonlTail(world.state / "logs" / "events.jsonl"))
        marks: list[tuple[str, str, int]] = []  # (turn, comment id, the stand-in's replies before its prompt)
        for number in range(comments + 1):
            before = len(plug.standin.replies())
            text = f"turn {number} done"
            plan = turn(rng, cache_writes=dialect.cache_writes)
            plug.standin.script(*(dialect.script(request, text=text, folder=folder) for request in plan))
            comment = _prompted(world, events, ref, number)
            if comment is None:
                found.problems.append(events.failure)
                break
            marks.append((f"comment {number}" if comment else "start", comment, before))
        _turns(found, marks, plug.standin.replies(), events, _costs(world))
    finally:
        world.close()
    found.side = [usage for is_turn, usage in map(dialect.served, plug.standin.replies()) if not is_turn]
    return found


def _arranged(world: World, dialect: Dialect) -> tuple[WorkItemRef, Path]:
    """The stand-in's model priced (a `pricing.models` entry, numbers as an operator writes them), one
    item, and its agent's folder with the file its tool calls read."""
    config = json.loads(world.config.read_text(encoding="utf-8"))
    config["pricing"] = {"models": {dialect.model: {k: float(v) for k, v in dialect.price.items()}}}
    world.config.write_text(json.dumps(config, indent=1), encoding="utf-8")
    (ref,) = world.items(1)
    folder = Path(world.workdir(ref))
    folder.mkdir(parents=True)
    (folder / NOTES).write_text("what a tool call reads\n", encoding="utf-8")
    return ref, folder


def _prompted(world: World, events: Events, ref: WorkItemRef, number: int) -> str | None:
    """Prompt `number`'s turn, once it ended: the start prompt's (0: the poller started, the item armed at
    first sight; no comment's, ""), or comment `number`'s (its id). None: it did not end."""
    if number == 0:
        world.start_poller()
        return "" if events.wait(lambda: _turn_ended(world), what="the start prompt's turn") else None
    comment = world.comment(ref, f"comment {number}: please carry on")
    return comment if events.wait(lambda: events.ended.get(comment), what=f"comment {number}'s turn") else None


def _costs(world: World) -> dict[str, TurnCost]:
    store = SqliteStateStore(world.state / "state.sqlite3")
    try:
        return {cost.comment_id: cost for cost in store.costs()}
    finally:
        store.close()


def _turns(
    found: AgentRun, marks: list[tuple[str, str, int]], replies: list[Any], events: Events, costs: dict[str, TurnCost]
) -> None:
    """Each turn's requests: the stand-in's replies to turn requests from its mark to the next turn's.
    The start prompt's turn is no comment's: the-loop records it under its delivery id (`start-…`)."""
    ends = [before for _, _, before in marks[1:]] + [len(replies)]
    started = next((key for key in costs if key.startswith("start-")), "")
    for (label, comment_id, before), after in zip(marks, ends, strict=True):
        served = tuple(usage for is_turn, usage in map(found.dialect.served, replies[before:after]) if is_turn)
        key = comment_id or started
        found.turns.append(Turn(label, key, served, costs.get(key), events.ended.get(key, {})))


def _turn_ended(world: World) -> bool:
    """Some spawn's agent said a turn of its ended (its receipt)."""
    for path in (world.state / "receipts").glob(f"*/*/*{SUFFIX}"):
        found = receipt_of(path.name.removesuffix(SUFFIX), path.read_text(encoding="utf-8", errors="replace"))
        if found is not None and found.kind is ReceiptKind.TURN_ENDED:
            return True
    return False


@dataclass
class Events:
    """The daemon's event log as it grows: each `session.turn_finished`, by comment id."""

    world: World
    tail: JsonlTail
    ended: dict[str, dict[str, Any]] = field(default_factory=dict)
    failure: str = ""

    def wait(self, found: Callable[[], Any], *, what: str) -> Any:
        """`found()` once it is something, the event log read meanwhile; None (and why, in `failure`)
        when it is not within `TURN_SECONDS`, or the poller died."""
        deadline = time.monotonic() + TURN_SECONDS
        while time.monotonic() < deadline and self.world.poller_running():
            for event in self.tail.new():
                if event.get("event") == "session.turn_finished":
                    # a comment's turn by its id; the start prompt's, of no comment, by its delivery id
                    self.ended[str(event.get("comment_id") or event.get("delivery_id"))] = event
            if value := found():
                return value
            time.sleep(0.2)
        died = "" if self.world.poller_running() else f" (the poller ended: {'; '.join(self.world.exits)})"
        self.failure = f"{what}: not ended within {TURN_SECONDS:g} s{died}"
        return None
