"""Every comment accounted for, from the harnesses' own record and the tracker alone: delivered
once, or abandoned with its notice — and every harness death explained by the campaign's kills."""

from __future__ import annotations

import re
import signal
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field

from bench.chaos.records import HarnessRun

_NOTICE_NAMES = re.compile(r"\bcomment (\d+)\b")  # giveup_notice: "[comment 12](link)" or "comment 12"


@dataclass(frozen=True, slots=True)
class Sent:
    """A comment the campaign posted: its id on the tracker and the token only its body holds."""

    comment_id: str
    token: str


@dataclass
class Tally:
    lost: list[str] = field(default_factory=list)  # tokens neither delivered nor abandoned with a notice
    duplicated: list[str] = field(default_factory=list)  # tokens a harness took twice or more
    killed: list[str] = field(default_factory=list)  # live harnesses the campaign did not kill, gone
    delivered: int = 0  # exactly once
    abandoned: int = 0  # never delivered, and a notice names it
    misreported: list[str] = field(default_factory=list)  # delivered, yet a notice says it was not
    unsubmitted: int = 0  # pastes a harness never submitted (it died first)
    noticed_twice: list[str] = field(default_factory=list)  # a kill between a notice and its ledger write

    def line(self, kills: int) -> str:
        lost, duplicated, killed = len(self.lost), len(self.duplicated), len(self.killed)
        return f"{kills} kills: {lost} lost, {duplicated} duplicated, {killed} live sessions killed"


def noticed(notices: Iterable[str]) -> Counter[str]:
    """How many notices name each comment id."""
    return Counter(found for body in notices for found in set(_NOTICE_NAMES.findall(body)))


Taken = Callable[[str], Mapping[str, int]]  # a token -> how many times each harness (or conversation) took it


def taken_by_runs(runs: Iterable[HarnessRun]) -> Taken:
    """What the simulator's own lines say each harness process took."""
    runs = list(runs)
    return lambda token: {str(r.pid): n for r in runs if (n := sum(p.count(token) for p in r.accepted))}


def count_comments(
    sent: Iterable[Sent], runs: Iterable[HarnessRun], notices: Iterable[str], tally: Tally, taken: Taken | None = None
) -> None:
    """`taken`: what the agent received, by its own records (bench/chaos/agents.py); the runs' lines by default."""
    runs = list(runs)
    taken = taken or taken_by_runs(runs)
    dropped = [paste for run in runs for paste in run.unsubmitted]
    named = noticed(notices)
    for comment in sent:
        by = taken(comment.token)
        times, what = sum(by.values()), f"{comment.token} (comment {comment.comment_id})"
        tally.unsubmitted += sum(paste.count(comment.token) for paste in dropped)
        if times >= 2:
            where = "one harness" if len(by) == 1 else f"{len(by)} harnesses"  # or conversations
            tally.duplicated.append(f"{what} taken {times} times, by {where}")
        if named[comment.comment_id] >= 2:
            tally.noticed_twice.append(what)
        if times == 0 and not named[comment.comment_id]:
            tally.lost.append(what)
        elif times == 0:
            tally.abandoned += 1
        elif named[comment.comment_id]:
            tally.misreported.append(what)
        elif times == 1:
            tally.delivered += 1


def count_deaths(
    runs: Iterable[HarnessRun],
    *,
    alive: Callable[[int], bool],
    killed_pids: Collection[int],
    killed_servers: Collection[int],
    tally: Tally,
    hung: Collection[str] = (),
    hibernated: Collection[str] = (),
) -> None:
    """A harness is gone by the campaign's hand (SIGKILLed, or its tmux server was), by its own (it
    recorded its exit), by the-loop's as hung in its start (`hung`: the spawns `session.not_ready`
    says it ended; it never said it was ready) or as idle (`hibernated`, by SIGTERM), or it was a live
    session killed. Two running at once
    for one item count too."""
    runs = list(runs)
    doomed = {run.pid for run in runs if run.pid in killed_pids or run.server in killed_servers}
    doomed |= {run.pid for run in runs if run.spawn and run.spawn in hung and not run.ready}
    # hibernated while idle (`hibernated`: the spawns `session.hibernated` names): ended by the-loop's SIGTERM
    doomed |= {run.pid for run in runs if run.spawn and run.spawn in hibernated and run.signal == signal.SIGTERM}
    for run in runs:
        if alive(run.pid) or run.pid in doomed or run.exited:
            continue
        how = f"signal {run.signal}" if run.signal else "no exit recorded"
        tally.killed.append(f"harness {run.pid} in {run.cwd} died ({how}), not by the campaign")
    for run in runs:
        for peer in run.peers:
            if peer not in doomed:
                tally.killed.append(f"harness {run.pid} started while harness {peer} still ran in {run.cwd}")


def reaction_gaps(sent: Iterable[Sent], taken: Taken, reactions: Iterable[tuple[str, str]]) -> Mapping[str, int]:
    """Best-effort feedback, for the record: delivered comments without 🎉 (a kill between the
    ledger's write and the reaction)."""
    got: dict[str, set[str]] = {}
    for comment_id, reaction in reactions:
        got.setdefault(comment_id, set()).add(reaction)
    missing = sum(
        1 for comment in sent if taken(comment.token) and "succeeded" not in got.get(comment.comment_id, set())
    )
    return {"delivered without 🎉": missing}
