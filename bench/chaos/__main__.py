"""`python -m bench.chaos --kills N [--seed S] [--harness sim|codex|claude|gemini|opencode] [--receipts file|none]`:
the kill campaign. Its last line reads `N kills: L lost, D duplicated, K live sessions killed`;
exit 1 when L or K is not 0, or D is not 0 for a harness with receipts. `--harness sim` (the
default) is tests/harness_sim.py, with `--receipts`; another name is that real agent, offline
against its model API's stand-in, accounted from its own records (bench/chaos/agents.py)."""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench.chaos.account import Tally, count_comments, count_deaths, reaction_gaps
from bench.chaos.agents import AGENTS, Agent, Simulator
from bench.chaos.campaign import Campaign, wait
from bench.chaos.records import running
from bench.chaos.world import World

AT_LEAST_ONCE = (
    "without receipts nothing says whether a prompt landed (at-least-once): taken twice by one harness, a "
    "poller was killed between the paste and the ledger's write and pasted it again on retry; by two, the "
    "harness that took it died within confirmSeconds and its successor was given it again"
)


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.chaos", description=__doc__)
    parser.add_argument("--kills", type=int, required=True, help="how many SIGKILLs (poller, tmux server, harness)")
    parser.add_argument("--seed", type=int, default=None, help="replay a campaign (default: a fresh one, printed)")
    parser.add_argument("--harness", choices=sorted(AGENTS), default="sim", help="the agent the items get")
    parser.add_argument("--receipts", choices=("file", "none"), default="file", help="how the simulator confirms")
    parser.add_argument("--items", type=int, default=4, help="work items the comments go to")
    parser.add_argument(
        "--settle", type=float, default=None, help="seconds the last poller gets to resolve all (default: the agent's)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the campaign's folder (printed)")
    parser.add_argument(
        "--hibernate", type=float, default=None, metavar="SECONDS",
        help="routing.hibernateAfterSeconds: idle agents are ended and resumed by their next comment",
    )  # fmt: skip
    return parser.parse_args(argv)


def replay(args: argparse.Namespace, seed: int) -> str:
    """The command that runs this campaign again: its seed and every flag that shapes it (a run of
    tests/e2e/test_chaos.py with `--items 2`, replayed with the default 4 items, is another campaign)."""
    how = f"--receipts {args.receipts}" if args.harness == "sim" else f"--harness {args.harness}"
    more = "".join(
        f" --{name} {value}" for name in ("hibernate", "settle") if (value := getattr(args, name)) is not None
    )
    return f"python -m bench.chaos --kills {args.kills} --seed {seed} {how} --items {args.items}{more}"


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().getrandbits(32)
    agent: Agent = (
        Simulator(args.receipts, turn_ends=args.hibernate is not None)
        if args.harness == "sim"
        else AGENTS[args.harness]()
    )
    print(f"seed {seed} (replay: {replay(args, seed)})")
    root = Path(tempfile.mkdtemp(prefix="the-loop-chaos-"))
    world = World(root, agent, hibernate_after=args.hibernate)
    started = time.monotonic()
    try:
        tally, kills = campaign(world, args, random.Random(seed))
    finally:
        world.close()
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    print(f"took {time.monotonic() - started:.1f}s")
    print(tally.line(kills))
    promise_kept = not tally.lost and not tally.killed and (not agent.confirms or not tally.duplicated)
    return 0 if promise_kept else 1


def campaign(world: World, args: argparse.Namespace, rng: random.Random) -> tuple[Tally, int]:
    refs = world.items(args.items)
    world.start_poller()
    if not wait(lambda: len({run.cwd for run in world.runs() if run.ready}) >= len(refs), 180.0):
        raise SystemExit(f"the items' sessions never started; see {world.root} (--keep)")
    run = Campaign(world, refs, rng)
    run.run(args.kills)
    settled = run.settle(args.settle if args.settle is not None else world.agent.settle_seconds)
    runs = world.runs()
    tally = Tally()
    taken = world.agent.taken(runs)
    count_comments(run.sent, runs, world.notices(), tally, taken)
    alive = lambda pid: running(pid, world.record)  # noqa: E731
    hung, hibernated = world.hung_spawns(), world.hibernated_spawns()
    count_deaths(
        runs, alive=alive, killed_pids=world.killed_pids, killed_servers=world.killed_servers, tally=tally, hung=hung,
        hibernated=hibernated,
    )  # fmt: skip
    if hibernated:
        print(f"harnesses the-loop hibernated (idle): {len(hibernated)}")
    if hung:
        print(f"harnesses the-loop ended as hung in their start: {len(hung)}")
    report(run, tally, settled=settled, harnesses=len(runs), confirms=world.agent.confirms)
    for gap, count in reaction_gaps(run.sent, taken, world.reactions()).items():
        print(f"  {gap}: {count}")
    for note in world.agent.notes(comment.token for comment in run.sent):
        print(f"  {note}")
    return tally, run.total


def report(run: Campaign, tally: Tally, *, settled: bool, harnesses: int, confirms: bool) -> None:
    world = run.world
    print("kills: " + ", ".join(f"{what} {count}" for what, count in sorted(run.kills.items())))
    for aim, count in sorted(run.aims.items()):
        print(f"  {aim}: {count}")
    print(f"pollers: {world.pollers_started} started, {len(world.exits)} ended by themselves")
    for exit_ in world.exits:
        print(f"  {exit_}")
    killed = f"{len(world.killed_pids)} SIGKILLed, {len(world.killed_servers)} servers killed"
    print(f"harnesses: {harnesses} started, {killed}")
    print(
        f"comments: {len(run.sent)} posted; {tally.delivered} delivered once, "
        f"{tally.abandoned} abandoned with a notice, {len(tally.misreported)} delivered yet reported abandoned, "
        f"{tally.unsubmitted} pastes never submitted"
    )
    if not settled:
        print("  the last poller did not resolve every comment in time")
    for what, found in (("lost", tally.lost), ("duplicated", tally.duplicated), ("killed", tally.killed)):
        for entry in found:
            print(f"  {what}: {entry}")
    for entry in tally.misreported:
        print(f"  reported abandoned, yet delivered: {entry}")
    for entry in tally.noticed_twice:
        print(f"  two notices: {entry}")
    if tally.duplicated and not confirms:
        print(f"  duplicates: {AT_LEAST_ONCE}")


if __name__ == "__main__":
    sys.exit(main())
