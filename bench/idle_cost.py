"""The daemon's own CPU per idle cycle at two backlogs, in one run: does it grow with the listed items?

    .venv/bin/python -m bench.idle_cost                  # 100 and 1000 listed items, 8 idle cycles each
    .venv/bin/python -m bench.idle_cost --scales 20,200 --cycles 3   # CI's quick form

The load campaign's rig (bench/load): `the-loop webhook` as its own process, the real `gh` against
the HTTPS stand-in, real tmux, a few live sessions of the light harness (sessions to watch), the
other items by a stranger (only listed). CPU is the daemon process's own user+sys from /proc (not
its children's: gh and tmux cost the same at every backlog) over idle cycles, divided by the cycles.
The last line is the ratio of the largest backlog's figure to the smallest's.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bench.load.campaign import SECRET, Meter, _harnesses
from bench.load.daemon import LoadDaemon
from bench.load.github import LoadGitHub


def idle_cpu(folder: Path, *, items: int, sessions: int, cycles: int, interval: int) -> float:
    """Seconds of the daemon's own CPU per idle cycle with `items` listed items."""
    (folder / "github").mkdir(parents=True)
    github = LoadGitHub(folder / "github", repos=5, items=items, sessions=sessions, secret=SECRET)
    daemon = LoadDaemon(folder, github, interval=interval, secret=SECRET)
    daemon.start()
    try:
        daemon.wait_for(lambda: len(_harnesses(daemon)) >= sessions, timeout=900, what=f"{sessions} sessions")
        meter = Meter(daemon, github)
        meter.cycles_pass(3)  # the first cycle, the streams' start, and one past every confirmation
        window = meter.window(lambda: meter.cycles_pass(cycles))
        return window.per_cycle(window.usage.own)
    finally:
        daemon.stop()
        github.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=lambda t: tuple(int(n) for n in t.split(",")), default=(100, 1000))
    parser.add_argument("--cycles", type=int, default=8, help="idle cycles measured at each backlog")
    parser.add_argument("--sessions", type=int, default=4, help="live sessions (items with a session to watch)")
    parser.add_argument("--interval", type=int, default=2, help="polling.intervalSeconds")
    args = parser.parse_args()
    figures: list[tuple[int, float]] = []
    with tempfile.TemporaryDirectory(prefix="the-loop-idle-") as directory:
        for index, items in enumerate(args.scales):
            folder = Path(directory) / f"{index}-{items}"
            cpu = idle_cpu(folder, items=items, sessions=args.sessions, cycles=args.cycles, interval=args.interval)
            figures.append((items, cpu))
            print(f"{items:>6} listed items: daemon CPU per idle cycle {cpu * 1000:.1f} ms", flush=True)
    (small, small_cpu), (large, large_cpu) = figures[0], figures[-1]
    print(f"idle cost ratio {large} / {small} items: {large_cpu / max(small_cpu, 1e-9):.2f}")


if __name__ == "__main__":
    main()
