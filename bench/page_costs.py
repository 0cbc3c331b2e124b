"""What the fleet page's costs cost a refresh (the page is refreshed on every event while it is open).

A SQLite state store holding TURNS a day for the last 14 days and OLDER turns before them (a year),
over 100 items. Timed, each the median of its rounds: reading the last 14 days' rows on every refresh
(and every row, which each item's running total would take); the page's cost book's first read (every
row, as again once an hour); and its refresh — nothing new, or 10 rows new — which reads only the rows
ended since the newest it holds, less its overlap.

Run: .venv/bin/python -m bench.page_costs [--turns-a-day N] [--older N] [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from adapters.sqlite.store import SqliteStateStore
from app.usecases.views.costs import tallied
from app.usecases.views.page_costs import DAYS, CostBook
from domain.refs import WorkItemRef
from domain.spending import TurnCost
from domain.usage import TurnUsage

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
ITEMS = [WorkItemRef.parse(f"github:acme/widgets#{n}") for n in range(1, 101)]
TURN = TurnUsage(input=1200, output=800, cache_write=4000, cache_read=60_000, model="claude-sonnet-4-5")


def _fill(store: SqliteStateStore, turns_a_day: int, older: int) -> int:
    window = DAYS * turns_a_day
    spans = [(n, timedelta(days=DAYS) * n / max(window, 1)) for n in range(window)]
    spans += [(window + n, timedelta(days=DAYS) + timedelta(days=351) * n / max(older, 1)) for n in range(older)]
    with store.transaction():
        for n, ago in spans:
            cost = TurnCost(
                ITEMS[n % len(ITEMS)], str(n), NOW - ago, "claude", "alice", usage=TURN, micro_dollars=31_000
            )
            store.record_cost(cost)
    return len(spans)


def _tallied(costs: list[TurnCost]) -> None:
    """What the panel makes of the rows read: by day and by item."""
    tallied(costs, "day")
    tallied(costs, "item")


def _median_ms(act: Callable[[], object], rounds: int) -> float:
    took = []
    for _ in range(rounds):
        start = time.perf_counter()
        act()
        took.append(time.perf_counter() - start)
    return statistics.median(took) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns-a-day", type=int, default=1000)
    parser.add_argument("--older", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = SqliteStateStore(Path(folder) / "state.db")
        rows = _fill(store, args.turns_a_day, args.older)
        since = NOW - timedelta(days=DAYS)
        window = _median_ms(lambda: _tallied(store.costs(since=since)), args.rounds)
        every = _median_ms(lambda: tallied(store.costs(), "item"), max(1, args.rounds // 2))
        book = CostBook(lambda since: store.costs(since=since))
        start = time.perf_counter()
        book.figures(NOW)
        first = (time.perf_counter() - start) * 1000
        quiet = _median_ms(lambda: book.figures(NOW), args.rounds * 4)
        later = [NOW + timedelta(seconds=n + 1) for n in range(args.rounds)]
        took = []
        for n, at in enumerate(later):
            for k in range(10):
                store.record_cost(TurnCost(ITEMS[k], f"new-{n}-{k}", at, "claude", usage=TURN, micro_dollars=31_000))
            start = time.perf_counter()
            book.figures(at)
            took.append(time.perf_counter() - start)
        fresh = statistics.median(took) * 1000
        store.close()
    print(f"{rows:,} cost rows, {args.turns_a_day:,} a day for the last {DAYS} days, over {len(ITEMS)} items")
    print(f"read the last {DAYS} days on each refresh:   {window:8.1f} ms")
    print(f"read every row on each refresh:          {every:8.1f} ms")
    print(f"the book's first read (and hourly):      {first:8.1f} ms")
    print(f"the book's refresh, nothing new:         {quiet:8.2f} ms")
    print(f"the book's refresh, 10 rows new:         {fresh:8.2f} ms")
    print(f"ratio, a {DAYS}-day read / the book's refresh: {window / max(quiet, 1e-3):.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
