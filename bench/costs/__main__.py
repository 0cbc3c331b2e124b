"""`python -m bench.costs`: see bench/costs/__init__.py."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import bench.costs
from bench.costs.figures import figures, table
from bench.costs.run import AGENTS, run

FULL, QUICK = 10, 2  # comments per agent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.costs", description=bench.costs.__doc__.splitlines()[0])
    parser.add_argument("--comments", type=int, help=f"comments per agent (default {FULL}; --quick {QUICK})")
    parser.add_argument("--quick", action="store_true", help=f"CI's form: {QUICK} comments per agent")
    parser.add_argument("--agents", default=",".join(AGENTS), help="which, comma-separated (default: all)")
    parser.add_argument("--seed", type=int, default=1, help="draws the usage served (default 1)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--keep", action="store_true", help="keep each run's folder (state, event log), printed")
    args = parser.parse_args(argv)
    comments = args.comments if args.comments is not None else QUICK if args.quick else FULL
    names = [name for name in args.agents.split(",") if name]
    if unknown := [name for name in names if name not in AGENTS]:
        parser.error(f"no such agent: {', '.join(unknown)} (known: {', '.join(AGENTS)})")
    found, started = [], time.monotonic()
    for name in names:
        root = Path(tempfile.mkdtemp(prefix=f"the-loop-costs-{name}-"))
        try:
            found.append(figures(run(name, comments, args.seed, root)))
        finally:
            if args.keep:
                print(f"kept {root}", file=sys.stderr)
            else:
                shutil.rmtree(root, ignore_errors=True)
    accurate = all(f.accurate for f in found)
    if args.json:
        print(json.dumps({"seed": args.seed, "comments": comments, "agents": [f.as_json() for f in found]}))
    else:
        print(table(found, seed=args.seed, comments=comments))
        print(f"(took {time.monotonic() - started:.0f} s)")
    return 0 if accurate else 1


if __name__ == "__main__":
    sys.exit(main())
