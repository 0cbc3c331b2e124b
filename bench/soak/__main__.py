"""The soak: the real daemon through an accelerated month, state and memory at
the start, the middle and the end.

    .venv/bin/python -m bench.soak             # short form (CI's, tests/e2e/test_benches.py)
    .venv/bin/python -m bench.soak --long      # 1,000 items, 100,000 comments, 30 days

`the-loop poll` runs as its own process on the sandbox tracker, with a private tmux server and the
load campaign's light harness (bench/load/harness.py: it writes receipts as Claude Code's hooks do
and records every paste). Each day of the month new items are labelled (one in ten by the
authorized author: its session is spawned), the day's comments are written (a share by the
authorized author on items with a session, meant for the agent; the rest by a stranger on any open
item), the daemon is waited for until every comment meant for an agent is pasted, the items opened
`open_days` before are closed (their sessions end), and every `restart_every` days the daemon is
restarted (SIGTERM). A day lasts as long as the daemon takes: the month is accelerated, not timed.

A row is printed after the first day, at the middle and at the end: the state on disk (the store
with its WAL, the receipts, the event log with its rotated files; not the sandbox tracker's own
file, which is GitHub's side), the daemon's resident memory, and its own CPU per idle cycle. The
last line counts the comments: lost (meant for an agent, never pasted) and duplicated (pasted twice,
or pasted though never meant).
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from bench.soak.daemon import SoakDaemon
from bench.soak.month import REPO, Form, Month

SHORT = Form(
    items=40, comments=800, days=6, open_days=2, session_every=5, restart_every=2, idle_cycles=3,
    log_max_bytes=64 * 1024,
)  # fmt: skip
LONG = Form(items=1000, comments=100_000, days=30, idle_cycles=10)
KIB = 1024


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    day: int
    open_items: int
    store_kib: float
    receipts_kib: float
    logs_kib: float
    rss_mib: float
    idle_cpu_ms: float

    @property
    def state_kib(self) -> float:
        return self.store_kib + self.receipts_kib + self.logs_kib

    def line(self) -> str:
        return (
            f"{self.name:<7}{self.day:>5}{self.open_items:>6}{self.store_kib:>11.0f}{self.receipts_kib:>14.0f}"
            f"{self.logs_kib:>10.0f}{self.state_kib:>11.0f}{self.rss_mib:>9.1f}{self.idle_cpu_ms:>13.1f}"
        )


HEADER = f"{'row':<7}{'day':>5}{'open':>6}{'store KiB':>11}{'receipts KiB':>14}{'logs KiB':>10}{'state KiB':>11}"
HEADER += f"{'RSS MiB':>9}{'idle CPU ms':>13}"


def size_kib(*paths: Path) -> float:
    total = 0
    for path in paths:
        if path.is_file():
            total += path.stat().st_size
        elif path.is_dir():
            total += sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return total / KIB


def measure(name: str, day: int, month: Month, daemon: SoakDaemon) -> Row:
    """After the day's comments were pasted: a few idle cycles, then what the state holds."""
    daemon.wait_for(lambda: daemon.cycles() >= 2, timeout=120, what="two cycles")
    settle = daemon.cycles() + 2
    daemon.wait_for(lambda: daemon.cycles() >= settle, timeout=120, what="the day's last cycles")
    before, start = daemon.usage(), daemon.cycles()
    daemon.wait_for(lambda: daemon.cycles() >= start + month.form.idle_cycles, timeout=300, what="idle cycles")
    spent = daemon.usage() - before
    state = month.state
    store = [state / f"state.sqlite3{suffix}" for suffix in ("", "-wal", "-shm")]
    return Row(
        name,
        day + 1,
        len(month.opened),
        size_kib(*store),
        size_kib(state / "receipts"),
        size_kib(state / "logs"),
        daemon.rss_kib() / KIB,
        spent.own * 1000 / max(1, daemon.cycles() - start),
    )


def drain(month: Month, daemon: SoakDaemon, *, timeout: float) -> None:
    """Until every comment meant for an agent so far was pasted (or `timeout`: then it counts lost)."""
    try:
        daemon.wait_for(lambda: month.counted(daemon.pastes())[0] == 0, timeout=timeout, what="the day's pastes")
    except RuntimeError as error:
        if not daemon.alive():
            raise
        print(f"  (day not drained: {error})", flush=True)


def run(folder: Path, form: Form, *, drain_seconds: float) -> None:
    month = Month(form, folder / "state")
    daemon = SoakDaemon(
        folder, repo=str(REPO), log_max_bytes=form.log_max_bytes, log_keep=form.log_keep, concurrent=form.concurrent
    )
    meant = round(form.comments * form.authorized_share)
    print(
        f"soak: {form.items} items over {form.days} days (each open {form.open_days}, one in {form.session_every}"
        f" with a session), {form.comments} comments (about {meant} meant for an agent), a restart every"
        f" {form.restart_every} days; event log rotated at {form.log_max_bytes // KIB} KiB, {form.log_keep} kept",
        flush=True,
    )
    print(HEADER, flush=True)
    middle = form.days // 2 - 1
    rows: list[Row] = []
    try:
        month.tracker  # noqa: B018 - the sandbox file exists before the daemon opens it
        daemon.start()
        for day in range(form.days):
            month.open_items(day)
            month.comment(day)
            drain(month, daemon, timeout=drain_seconds)
            month.close_items(day)
            if day in {0, middle, form.days - 1}:
                rows.append(measure("start" if day == 0 else "middle" if day == middle else "end", day, month, daemon))
                print(rows[-1].line(), flush=True)
            if (day + 1) % form.restart_every == 0 and day < form.days - 1:
                daemon.restart()
        lost, duplicated = month.counted(daemon.pastes())
    finally:
        daemon.stop()
        month.close()
    mid, end = rows[-2], rows[-1]
    print(
        f"end / middle: state {end.state_kib / mid.state_kib:.2f} (store {end.store_kib / mid.store_kib:.2f},"
        f" receipts {_ratio(end.receipts_kib, mid.receipts_kib)}, logs {end.logs_kib / mid.logs_kib:.2f}),"
        f" RSS {end.rss_mib / mid.rss_mib:.2f}; {daemon.runs} daemon runs, {month.closed} items closed"
    )
    print(f"{form.comments} comments: {lost} lost, {duplicated} duplicated")


def _ratio(end: float, middle: float) -> str:
    return f"{end / middle:.2f}" if middle else ("1.00" if not end else "grew from 0")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--long", action="store_true", help="the month the issue asks for (hours)")
    parser.add_argument("--items", type=int)
    parser.add_argument("--comments", type=int)
    parser.add_argument("--days", type=int)
    parser.add_argument("--keep", type=Path, help="run in this folder and keep it")
    parser.add_argument("--drain-seconds", type=float, default=600.0, help="longest wait for a day's pastes")
    args = parser.parse_args()
    form = LONG if args.long else SHORT
    given = {k: v for k, v in (("items", args.items), ("comments", args.comments), ("days", args.days)) if v}
    form = replace(form, **given)
    if form.days < 4:
        parser.error("--days must be at least 4 (a start, a middle and an end)")
    with tempfile.TemporaryDirectory(prefix="the-loop-soak-") as directory:
        folder = args.keep or Path(directory)
        run(folder, form, drain_seconds=args.drain_seconds)


if __name__ == "__main__":
    main()
