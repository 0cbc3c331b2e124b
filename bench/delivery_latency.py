"""Delivery latency: back-to-back comments by webhook, into a harness without
receipts and into one that writes them, and the longest poll cycle while three items spawn.

    .venv/bin/python -m bench.delivery_latency            # 20 pairs per harness
    .venv/bin/python -m bench.delivery_latency --quick    # CI's form: 2 pairs, short waits
    .venv/bin/python -m bench.delivery_latency --json     # the figures as one JSON object

Everything is real but GitHub: the daemon (`the-loop webhook`: the poller and its receiver) as
its own process, the real `gh` against the HTTPS stand-in, real tmux on a private server, the
load campaign's light harness (bench/load/harness.py: `receipts: none`, or `receipts: file`
writing Claude Code's receipts itself). For each harness: three labelled items spawn at the
daemon's first cycle (its report gives each cycle's length), then pairs of comments on one item,
the second posted right after the first, each announced by a signed webhook delivery; a pair is
resolved before the next is posted. webhook -> paste runs from `webhook.received` (event log) to
the harness's record of the paste; paste -> confirmed from that record to `dispatch.confirmed`.
Every comment must be pasted once and confirmed once: the run says what was lost or doubled.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.load.daemon import LoadDaemon
from bench.load.figures import percentile
from bench.load.github import LoadGitHub

SECRET = "delivery-latency-secret"
GOALS = {"webhook_paste_p99_ms": 100.0, "paste_confirmed_p99_ms": 30.0, "longest_cycle_s": 2.0}


@dataclass(frozen=True, slots=True)
class Form:
    pairs: int
    ready_seconds: float  # the receipt-less harness's: how long a young pane counts as starting
    confirm_seconds: float  # the receipt-less harness's "still alive" wait


FULL, QUICK = Form(pairs=20, ready_seconds=3, confirm_seconds=3), Form(pairs=2, ready_seconds=1, confirm_seconds=1)


@dataclass(frozen=True, slots=True)
class Run:
    receipts: str
    comments: int
    pasted_once: int
    confirmed_once: int
    lost: int
    duplicated: int
    failed: int
    webhook_paste_p50_ms: float
    webhook_paste_p99_ms: float
    paste_confirmed_p50_ms: float
    paste_confirmed_p99_ms: float
    longest_cycle_s: float
    cycles_while_spawning: int


def run(folder: Path, form: Form, receipts: str) -> Run:
    folder.mkdir(parents=True)
    github = LoadGitHub(folder, repos=1, items=3, sessions=3, secret=SECRET)
    daemon = LoadDaemon(folder, github, interval=30, secret=SECRET)
    _harness(daemon, form, receipts)
    try:
        daemon.start()
        daemon.wait_for(lambda: len(_events(daemon, "dispatch.confirmed")) >= 3, timeout=120, what="three spawns")
        # the first cycle is the one that spawned them
        daemon.wait_for(lambda: len(daemon.cycles()) >= 1, timeout=120, what="the first cycle's report")
        spawning = daemon.cycles()
        sent = _pairs(daemon, github, form)
    finally:
        daemon.stop()
        github.close()
    return _figures(daemon, receipts, sent, spawning)


def _harness(daemon: LoadDaemon, form: Form, receipts: str) -> None:
    """The light harness as `receipts` says; the receipt-less one with the form's waits."""
    config = json.loads(daemon.config.read_text(encoding="utf-8"))
    light = config["routing"]["harnesses"]["light"]
    light["receipts"] = receipts
    if receipts == "none":
        light |= {"readySeconds": form.ready_seconds, "confirmSeconds": form.confirm_seconds}
    daemon.config.write_text(json.dumps(config, indent=1), encoding="utf-8")


def _pairs(daemon: LoadDaemon, github: LoadGitHub, form: Form) -> list[str]:
    """Each pair posted back to back, announced by webhook, resolved before the next."""
    target, sent = github.targets[0], []
    for index in range(form.pairs):
        pair = []
        for half in ("first", "second"):
            note, _ = github.comment(target, f"pair {index}, {half}: please carry on", review=False)
            if (status := github.announce(daemon.port, target, note)) != 202:
                raise RuntimeError(f"the webhook receiver answered {status} to comment {note.id}")
            pair.append(f"poll-comment-{note.id}")
        sent += pair
        daemon.wait_for(lambda pair=pair: _resolved(daemon, pair), timeout=120, what=f"pair {index} resolved")
    return sent


def _resolved(daemon: LoadDaemon, deliveries: list[str]) -> bool:
    done = {e.get("delivery_id") for e in _events(daemon, "dispatch.confirmed", "poll.comment_failed")}
    return all(d in done for d in deliveries)


def _events(daemon: LoadDaemon, *names: str) -> list[dict[str, Any]]:
    if not daemon.events_log.exists():
        return []
    lines = daemon.events_log.read_text(encoding="utf-8").splitlines()
    return [e for e in (json.loads(line) for line in lines if line.strip()) if e.get("event") in names]


def _at(event: dict[str, Any]) -> float:
    return datetime.fromisoformat(str(event["ts"]).replace("Z", "+00:00")).timestamp()


def _figures(daemon: LoadDaemon, receipts: str, sent: list[str], spawning: list[float]) -> Run:
    pastes = Counter(str(p["delivery"]) for p in daemon.pastes())
    pasted = {}
    for paste in daemon.pastes():
        pasted.setdefault(str(paste["delivery"]), float(paste["at"]))
    received = {e["delivery_id"]: _at(e) for e in reversed(_events(daemon, "webhook.received"))}
    confirmations = _events(daemon, "dispatch.confirmed")
    confirmed_count = Counter(str(e.get("delivery_id")) for e in confirmations)
    confirmed = {e["delivery_id"]: _at(e) for e in reversed(confirmations)}
    failed = {e.get("delivery_id") for e in _events(daemon, "dispatch.failed")}
    to_paste = [pasted[d] - received[d] for d in sent if d in pasted and d in received]
    to_confirm = [confirmed[d] - pasted[d] for d in sent if d in pasted and d in confirmed]
    ms = 1000.0
    return Run(
        receipts=receipts,
        comments=len(sent),
        pasted_once=sum(pastes[d] == 1 for d in sent),
        confirmed_once=sum(confirmed_count[d] == 1 for d in sent),
        lost=sum(pastes[d] == 0 for d in sent),
        duplicated=sum(pastes[d] > 1 or confirmed_count[d] > 1 for d in sent),
        failed=sum(d in failed for d in sent),
        webhook_paste_p50_ms=percentile(to_paste, 0.5) * ms,
        webhook_paste_p99_ms=percentile(to_paste, 0.99) * ms,
        paste_confirmed_p50_ms=percentile(to_confirm, 0.5) * ms,
        paste_confirmed_p99_ms=percentile(to_confirm, 0.99) * ms,
        longest_cycle_s=max(spawning, default=float("nan")),
        cycles_while_spawning=len(spawning),
    )


def report(form: Form, runs: list[Run]) -> str:
    none, file = runs
    lines = [
        f"delivery latency: {form.pairs} pairs of back-to-back webhook comments per harness; receipt-less "
        f"harness readySeconds {form.ready_seconds:g}, confirmSeconds {form.confirm_seconds:g}",
        f"  webhook -> paste, receipts: none   p50 {none.webhook_paste_p50_ms:7.1f} ms  p99 "
        f"{none.webhook_paste_p99_ms:7.1f} ms   (goal p99 <= {GOALS['webhook_paste_p99_ms']:g} ms)",
        f"  webhook -> paste, receipts: file   p50 {file.webhook_paste_p50_ms:7.1f} ms  p99 "
        f"{file.webhook_paste_p99_ms:7.1f} ms   (goal p99 <= {GOALS['webhook_paste_p99_ms']:g} ms)",
        f"  paste -> confirmed, receipts: file p50 {file.paste_confirmed_p50_ms:7.1f} ms  p99 "
        f"{file.paste_confirmed_p99_ms:7.1f} ms   (goal p99 <= {GOALS['paste_confirmed_p99_ms']:g} ms)",
        f"  longest cycle while three items spawn: receipts: none {none.longest_cycle_s:.2f} s, receipts: file "
        f"{file.longest_cycle_s:.2f} s   (goal <= {GOALS['longest_cycle_s']:g} s)",
    ]
    for one in runs:
        lines.append(
            f"  accounting, receipts: {one.receipts}: {one.comments} comments, {one.pasted_once} pasted once, "
            f"{one.confirmed_once} confirmed once, {one.lost} lost, {one.duplicated} duplicated, "
            f"{one.failed} failed attempts"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="CI's form: 2 pairs, 1 s waits")
    parser.add_argument("--pairs", type=int, help="pairs of comments per harness")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--keep", type=Path, help="run in this folder and keep it (state, event log, stderr)")
    args = parser.parse_args()
    form = QUICK if args.quick else FULL
    if args.pairs:
        form = Form(args.pairs, form.ready_seconds, form.confirm_seconds)
    with tempfile.TemporaryDirectory(prefix="the-loop-delivery-") as directory:
        folder = args.keep or Path(directory)
        started = time.monotonic()
        runs = [run(folder / receipts, form, receipts) for receipts in ("none", "file")]
    if args.json:
        print(json.dumps({"form": asdict(form), "goals": GOALS, "runs": [asdict(r) for r in runs]}))
        return
    print(report(form, runs))
    print(f"  (took {time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
