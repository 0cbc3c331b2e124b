"""Turn end latency: the agent's Stop receipt written -> 🚀 on its comment received by GitHub, in
poll mode and in webhook mode.

    .venv/bin/python -m bench.turn_end_latency            # 20 turns per mode
    .venv/bin/python -m bench.turn_end_latency --quick    # CI's form: 2 turns per mode
    .venv/bin/python -m bench.turn_end_latency --json     # the figures as one JSON object

Everything is real but GitHub: the daemon as its own process (`the-loop poll`, its comments read
every `intervalSeconds`; `the-loop webhook`, each comment announced by a signed webhook delivery,
the default 60 s between cycles, the quick form's an hour: no cycle can say a turn ended), the
real `gh` against the HTTPS stand-in, real tmux on a private server, the load campaign's light
harness (bench/load/harness.py) writing Claude Code's receipts, each turn taking a random time up
to `turn_seconds` so its Stop lands anywhere in the daemon's pause. One comment at a time on one
item; the next goes once the last got its 🚀. Stop written is the time in the receipt's name (the
hook's `date +%s%N`, the harness's `time.time_ns()`); 🚀 received is when the stand-in stored it.
Every turn must get its 🚀 once, the cycle after the last turn included: the run says what was
missing or doubled.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.load.daemon import LoadDaemon
from bench.load.figures import percentile
from bench.load.github import LoadGitHub, wall_clock

SECRET = "turn-end-latency-secret"
GOALS = {"stop_reaction_p99_ms": 1000.0}
ROCKET = "rocket"
MODES = ("poll", "webhook")


@dataclass(frozen=True, slots=True)
class Form:
    turns: int  # per mode
    turn_seconds: float  # a turn takes a random time up to this
    poll_interval: float  # poll mode's intervalSeconds: each comment waits for a cycle to be read
    webhook_interval: float  # webhook mode's: comments come at once, cycles this far apart


FULL = Form(turns=20, turn_seconds=2.0, poll_interval=5, webhook_interval=60)
# the quick form's webhook mode runs no cycle after its first: only the pause can say a turn ended
QUICK = Form(turns=2, turn_seconds=1.0, poll_interval=2, webhook_interval=3600)
AFTER_CYCLE_WAIT = 60.0  # the cycle after the last turn is waited for when it comes within this


@dataclass(frozen=True, slots=True)
class Run:
    mode: str
    interval_seconds: float
    turns: int
    said_once: int
    missing: int
    doubled: int
    stop_reaction_p50_ms: float
    stop_reaction_p99_ms: float
    stop_reaction_max_ms: float


class Rockets:
    """When the stand-in stored each 🚀, by comment id (wall clock)."""

    def __init__(self, github: LoadGitHub) -> None:
        self.at: dict[int, list[float]] = {}
        self._world = github.world
        self._lock = threading.Lock()
        self._world.after(r"/reactions$", self._stored, times=10**9)

    def _stored(self, *_: object) -> None:
        _, comment, content = self._world.reactions[-1]  # the hook runs under the world's lock
        if content == ROCKET:
            with self._lock:
                self.at.setdefault(comment, []).append(wall_clock())

    def of(self, comment: int) -> list[float]:
        with self._lock:
            return list(self.at.get(comment, []))


def run(folder: Path, form: Form, mode: str) -> Run:
    folder.mkdir(parents=True)
    github = LoadGitHub(folder, repos=1, items=1, sessions=1, secret=SECRET)
    interval = form.poll_interval if mode == "poll" else form.webhook_interval
    daemon = LoadDaemon(folder, github, interval=interval, secret=SECRET)
    _configure(daemon, form, mode)
    rockets = Rockets(github)
    try:
        daemon.launch(mode, github.standin.gh_env())
        daemon.wait_for(lambda: _stops(daemon), timeout=120, what="the spawn's first turn")
        comments = [_turn(daemon, github, rockets, mode, index) for index in range(form.turns)]
        if interval <= AFTER_CYCLE_WAIT:  # the cycle after the last turn must not say it again
            cycles = len(daemon.cycles())
            daemon.wait_for(lambda: len(daemon.cycles()) > cycles, timeout=interval + 120, what="one more cycle")
    finally:
        daemon.stop()
        github.close()
    return _figures(daemon, rockets, mode, interval, comments)


def _configure(daemon: LoadDaemon, form: Form, mode: str) -> None:
    """The light harness's turns take time; poll mode reads comments only by its cycles."""
    config = json.loads(daemon.config.read_text(encoding="utf-8"))
    config["routing"]["harnesses"]["light"]["env"] = {"LIGHT_TURN_SECONDS": str(form.turn_seconds)}
    if mode == "poll":
        del config["webhooks"]
    daemon.config.write_text(json.dumps(config, indent=1), encoding="utf-8")


def _turn(daemon: LoadDaemon, github: LoadGitHub, rockets: Rockets, mode: str, index: int) -> int:
    """One comment, delivered; its turn ends; its 🚀 arrives. The comment's id."""
    target = github.targets[0]
    note, _ = github.comment(target, f"turn {index}: please carry on", review=False)
    if mode == "webhook" and (status := github.announce(daemon.port, target, note)) != 202:
        raise RuntimeError(f"the webhook receiver answered {status} to comment {note.id}")
    daemon.wait_for(lambda: rockets.of(note.id), timeout=120, what=f"🚀 on comment {note.id}")
    return int(note.id)


def _receipts(daemon: LoadDaemon) -> list[tuple[int, dict[str, object]]]:
    """Every receipt of every spawn, with the time in its name (ns), in order."""
    found = []
    for path in (daemon.folder / "state" / "receipts").rglob("*.receipt"):
        written = int(path.name.split("-", 1)[0])
        found.append((written, json.loads(path.read_text(encoding="utf-8"))))
    return sorted(found, key=lambda receipt: receipt[0])


def _stops(daemon: LoadDaemon) -> bool:
    return any(data.get("hook_event_name") == "Stop" for _, data in _receipts(daemon))


def _stopped_at(daemon: LoadDaemon) -> dict[int, float]:
    """Each comment's Stop (epoch seconds): the first Stop after the prompt naming its delivery."""
    stopped, open_prompts = {}, []
    for written, data in _receipts(daemon):
        if data.get("hook_event_name") == "UserPromptSubmit":
            open_prompts.append(str(data.get("prompt", "")))
        elif data.get("hook_event_name") == "Stop" and open_prompts:
            prompt = open_prompts.pop(0)
            marker = "Delivery: poll-comment-"
            if marker in prompt:
                comment = int(prompt.split(marker, 1)[1].split()[0])
                stopped[comment] = written / 1e9
    return stopped


def _figures(daemon: LoadDaemon, rockets: Rockets, mode: str, interval: float, comments: list[int]) -> Run:
    stopped = _stopped_at(daemon)
    said = Counter({comment: len(rockets.of(comment)) for comment in comments})
    took = [rockets.of(c)[0] - stopped[c] for c in comments if rockets.of(c) and c in stopped]
    ms = 1000.0
    return Run(
        mode=mode,
        interval_seconds=interval,
        turns=len(comments),
        said_once=sum(said[c] == 1 for c in comments),
        missing=sum(said[c] == 0 or c not in stopped for c in comments),
        doubled=sum(said[c] > 1 for c in comments),
        stop_reaction_p50_ms=percentile(took, 0.5) * ms,
        stop_reaction_p99_ms=percentile(took, 0.99) * ms,
        stop_reaction_max_ms=max(took, default=float("nan")) * ms,
    )


def report(form: Form, runs: list[Run]) -> str:
    lines = [
        f"turn end latency: Stop receipt written -> 🚀 received by GitHub, {form.turns} turns per mode, "
        f"each turn up to {form.turn_seconds:g} s"
    ]
    for one in runs:
        lines.append(
            f"  {one.mode:<7} (intervalSeconds {one.interval_seconds:>4g})  p50 {one.stop_reaction_p50_ms:7.1f} ms  "
            f"p99 {one.stop_reaction_p99_ms:7.1f} ms  max {one.stop_reaction_max_ms:7.1f} ms   "
            f"(goal p99 <= {GOALS['stop_reaction_p99_ms']:g} ms)"
        )
    for one in runs:
        lines.append(
            f"  accounting, {one.mode}: {one.turns} turns, {one.said_once} said once, {one.missing} missing, "
            f"{one.doubled} doubled"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="CI's form: 2 turns per mode")
    parser.add_argument("--turns", type=int, help="turns per mode")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--keep", type=Path, help="run in this folder and keep it (state, event log, stderr)")
    args = parser.parse_args()
    form = QUICK if args.quick else FULL
    if args.turns:
        form = Form(args.turns, form.turn_seconds, form.poll_interval, form.webhook_interval)
    with tempfile.TemporaryDirectory(prefix="the-loop-turn-end-") as directory:
        folder = args.keep or Path(directory)
        started = time.monotonic()
        runs = [run(folder / mode, form, mode) for mode in MODES]
    if args.json:
        print(json.dumps({"form": asdict(form), "goals": GOALS, "runs": [asdict(r) for r in runs]}))
        return
    print(report(form, runs))
    print(f"  (took {time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
