"""`python -m bench.app_tokens`: see bench/app_tokens/__init__.py."""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import bench.app_tokens
from adapters.clock import SystemClock
from bench.app_tokens import figures as count
from bench.app_tokens.soak import INSTALLATIONS, Form, Soak
from tests.github_standin import StandIn
from tests.postgres_support import start_cluster

DELIVERY_SECONDS = 180.0  # the last comments' deliveries, on a busy machine


def run(form: Form, root: Path) -> count.Figures:
    with contextlib.ExitStack() as stack:
        pg = start_cluster()
        stack.callback(pg.stop)
        (root / "standin").mkdir(parents=True)
        standin = StandIn(root / "standin")
        stack.callback(standin.close)
        soak = Soak(root / "soak", pg, standin, form)
        stack.callback(soak.close)
        soak.start()
        started = SystemClock().monotonic()  # the stand-in's clock
        done = threading.Event()
        poster = soak.post_until(done)
        every = form.expiries * (form.token_seconds + 2) * 10 + 120
        soak.app.wait_for(lambda: count.replaced(soak, started) >= form.expiries, timeout=every)
        done.set()
        poster.join()
        _until(lambda: count.delivered(soak), DELIVERY_SECONDS)  # or not: what is missing is counted
        soak.stop()
        ended = SystemClock().monotonic()
        return count.Figures(
            form, ended - started, count.replaced(soak, started), count.tokens(soak, ended), count.comments(soak),
            count.failed(soak), count.leaks(soak),
        )  # fmt: skip
    raise AssertionError("unreachable")  # mypy: ExitStack may swallow an exception


def _until(done: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def table(found: count.Figures) -> str:
    form = found.form
    lines = [
        f"App tokens soak: tokens living {form.token_seconds} s, replaced {form.margin:g} s before expiring,"
        f" {len(INSTALLATIONS)} installations, {found.seconds:.0f} s ({found.seconds / form.token_seconds:.1f}"
        " token lifetimes); a host on SQLite, two on one PostgreSQL",
        f"{'host':<8}{'store':<10}{'inst':>5}{'tokens':>8}{'expiries':>10}{'early':>7}{'requests':>10}"
        f"{'401':>5}{'401 not asked again':>21}",
    ]
    for t in found.tokens:
        lines.append(
            f"{t.host:<8}{t.setup:<10}{t.installation:>5}{t.issued:>8}{t.expiries:>10}{t.early:>7}{t.requests:>10}"
            f"{t.refused:>5}{t.unanswered:>21}"
        )
    lines.append(f"{'store':<10}{'posted':>8}{'forwarded':>11}{'in ledger':>11}{'confirmed':>11}{'lost':>6}{'dup':>5}")
    for c in found.comments:
        lines.append(
            f"{c.setup:<10}{c.posted:>8}{c.forwarded:>11}{c.in_ledger:>11}{c.confirmed:>11}{c.lost:>6}{c.duplicated:>5}"
        )
    failures = sum(len(v) for v in found.failed.values())
    lines.append(f"failed calls (the daemons' events): {failures}" + "".join(
        f"\n  {host}: {line}" for host, said in found.failed.items() for line in said[:5]))  # fmt: skip
    lines.append(f"issued tokens found in the state files or PostgreSQL: {len(found.leaks)}" + "".join(
        f"\n  {where}" for where in found.leaks[:10]))  # fmt: skip
    lines.append("sound" if found.sound else "NOT SOUND")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    doc = bench.app_tokens.__doc__ or ""
    parser = argparse.ArgumentParser(prog="python -m bench.app_tokens", description=doc.splitlines()[0])
    parser.add_argument("--expiries", type=int, default=10, help="replacements of each token (default 10)")
    parser.add_argument("--token-seconds", type=int, default=3, help="a token's lifetime (default 3)")
    parser.add_argument("--margin", type=float, default=1.0, help="tokenRefreshMarginSeconds (default 1)")
    parser.add_argument("--comment-seconds", type=float, default=0.5, help="between two comments (default 0.5)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the run's folder (state, event logs), printed")
    args = parser.parse_args(argv)
    if not 0 < args.margin < args.token_seconds:
        parser.error("--margin must be more than 0 and less than --token-seconds")
    form = Form(args.token_seconds, args.margin, args.expiries, args.comment_seconds)
    root = Path(tempfile.mkdtemp(prefix="the-loop-app-tokens-"))
    try:
        found = run(form, root)
    finally:
        if args.keep:
            print(f"kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(found.as_json()) if args.json else table(found))
    return 0 if found.sound else 1


if __name__ == "__main__":
    sys.exit(main())
