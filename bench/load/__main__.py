"""Load campaign: 5 repositories of labelled items, live sessions of a light harness, a
steady stream of comments through the daemon's polling and its webhook receiver at once.

    .venv/bin/python -m bench.load            # short form (CI's smoke test): two small scales
    .venv/bin/python -m bench.load --long     # 100, 300, 1000 items, 100 sessions, 5 minutes each

Everything is real but GitHub: `the-loop webhook` as its own process, the real `gh` against the
HTTPS stand-in (tests/github_standin, on the wall clock), real tmux on a private server, one
harness process per session (bench/load/harness.py, with receipts). Prints one column per scale
and the ratio of the largest to the smallest; `--json` prints the figures as one JSON object.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import asdict
from pathlib import Path

from bench.load.campaign import Form, run_scale
from bench.load.figures import table

SHORT = Form(scales=(10, 30), sessions=4, repos=5, rate=1.0, seconds=8, interval=2, idle_cycles=2, drain_seconds=60)
LONG = Form(scales=(100, 300, 1000), sessions=100, repos=5, rate=0.25, seconds=300, interval=10, idle_cycles=5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--long", action="store_true", help="the long form (about 25 minutes)")
    parser.add_argument("--scales", type=lambda text: tuple(int(n) for n in text.split(",")), help="e.g. 100,1000")
    parser.add_argument("--seconds", type=float, help="length of the comment stream at each scale")
    parser.add_argument("--rate", type=float, help="comments a second")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--keep", type=Path, help="run in this folder and keep it (state, event log, stderr)")
    args = parser.parse_args()
    form = LONG if args.long else SHORT
    form = Form(
        scales=args.scales or form.scales,
        sessions=form.sessions,
        repos=form.repos,
        rate=args.rate or form.rate,
        seconds=args.seconds or form.seconds,
        interval=form.interval,
        idle_cycles=form.idle_cycles,
        drain_seconds=form.drain_seconds,
    )
    runs = []
    with tempfile.TemporaryDirectory(prefix="the-loop-load-") as directory:
        folder = args.keep or Path(directory)
        for index, items in enumerate(form.scales):
            runs.append(run_scale(folder / f"{index}-{items}-items", form, items))
    if args.json:
        print(json.dumps({"form": asdict(form), "runs": [r.as_dict() for r in runs]}))
        return
    print(
        f"load: {form.repos} repositories, {form.sessions} live sessions, {form.rate:g} comments/s for "
        f"{form.seconds:g} s (every other one also by webhook), polling.intervalSeconds {form.interval}"
    )
    print(table(runs))


if __name__ == "__main__":
    main()
