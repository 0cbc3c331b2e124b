"""What one run at one scale measured, and the table comparing the scales."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

BUDGET = 5000  # GitHub's requests per hour for a token


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


@dataclass(frozen=True, slots=True)
class Figures:
    items: int
    sessions: int
    idle_cycles: int
    idle_cycle_s: float  # median duration of an idle cycle
    idle_cpu_s: float  # the daemon's own user+sys per idle cycle
    idle_children_cpu_s: float  # its children's (gh, tmux clients) per idle cycle
    idle_requests_per_cycle: float
    busy_cycles: int
    busy_cycle_s: float  # median duration of a cycle under the stream
    busy_cycle_max_s: float
    busy_cpu_s: float  # the daemon's own user+sys per cycle under the stream
    busy_children_cpu_s: float
    rss_mib: float  # resident set at the end of the stream
    peak_rss_mib: float  # its high-water mark over the whole run
    poll_p50_s: float  # comment created -> the harness's record of the paste
    poll_p99_s: float
    poll_taken_p50_s: float  # comment created -> a cycle took it up (dispatch.queued)
    webhook_p50_s: float
    webhook_p99_s: float
    webhook_received_p50_s: float  # comment created -> the receiver had it (webhook.received)
    webhook_taken_p50_s: float
    requests_per_hour: float  # all requests, under the stream
    budget_per_hour: float  # those that cost rate limit (not 304)
    idle_requests_per_hour: float
    budget_per_comment: float  # requests costing rate limit under the stream, per comment sent
    sent: int
    pasted_once: int
    lost: int
    duplicated: int
    spawn_s: float  # from the daemon's start until every session's harness had its first prompt

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


Row = tuple[str, Callable[[Figures], float], str]
ROWS: tuple[Row, ...] = (
    ("first cycle: spawn every session, s", lambda f: f.spawn_s, ".1f"),
    ("idle cycle, s (median)", lambda f: f.idle_cycle_s, ".2f"),
    ("idle cycle, daemon CPU s", lambda f: f.idle_cpu_s, ".3f"),
    ("idle cycle, children CPU s (gh, tmux)", lambda f: f.idle_children_cpu_s, ".3f"),
    ("idle cycle, requests", lambda f: f.idle_requests_per_cycle, ".1f"),
    ("busy cycle, s (median)", lambda f: f.busy_cycle_s, ".2f"),
    ("busy cycle, s (max)", lambda f: f.busy_cycle_max_s, ".2f"),
    ("busy cycle, daemon CPU s", lambda f: f.busy_cpu_s, ".3f"),
    ("busy cycle, children CPU s (gh, tmux)", lambda f: f.busy_children_cpu_s, ".3f"),
    ("RSS at the end, MiB", lambda f: f.rss_mib, ".1f"),
    ("RSS peak, MiB", lambda f: f.peak_rss_mib, ".1f"),
    ("latency poll p50, s", lambda f: f.poll_p50_s, ".2f"),
    ("latency poll p99, s", lambda f: f.poll_p99_s, ".2f"),
    ("  poll: taken up by a cycle, p50 s", lambda f: f.poll_taken_p50_s, ".2f"),
    ("latency webhook p50, s", lambda f: f.webhook_p50_s, ".2f"),
    ("latency webhook p99, s", lambda f: f.webhook_p99_s, ".2f"),
    ("  webhook: received, p50 s", lambda f: f.webhook_received_p50_s, ".2f"),
    ("  webhook: taken up by a cycle, p50 s", lambda f: f.webhook_taken_p50_s, ".2f"),
    ("requests/h under the stream", lambda f: f.requests_per_hour, ".0f"),
    (f"  of them costing rate limit (budget {BUDGET})", lambda f: f.budget_per_hour, ".0f"),
    ("  per comment, costing rate limit", lambda f: f.budget_per_comment, ".1f"),
    ("requests/h idle (all 304: free)", lambda f: f.idle_requests_per_hour, ".0f"),
    ("comments sent", lambda f: f.sent, "d"),
    ("  pasted once / lost / duplicated", lambda f: f.pasted_once, "d"),
)


def table(runs: Sequence[Figures]) -> str:
    """One column per scale and the ratio of the largest to the smallest."""
    head = f"{'':44}" + "".join(f"{f'{r.items} items':>12}" for r in runs) + f"{'ratio':>8}"
    lines = [head]
    for name, value, spec in ROWS:
        cells = "".join(f"{_cell(value(r), spec, r, name):>12}" for r in runs)
        first, last = value(runs[0]), value(runs[-1])
        ratio = f"{last / first:.2f}" if first and not math.isnan(first) and not name.startswith("  pasted") else ""
        lines.append(f"{name:44}{cells}{ratio:>8}")
    return "\n".join(lines)


def _cell(value: float, spec: str, run: Figures, name: str) -> str:
    if name.startswith("  pasted"):
        return f"{run.pasted_once}/{run.lost}/{run.duplicated}"
    if isinstance(value, float) and math.isnan(value):
        return "-"
    return format(round(value) if spec == "d" else value, spec)
