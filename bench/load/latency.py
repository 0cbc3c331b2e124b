"""Comment -> paste latency per ingress, and where it goes: from the harnesses' records of their
pastes and the daemon's event log (when the receiver had it, when a cycle took it up)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.load.figures import percentile
from bench.load.stream import Ingress, Sent


@dataclass(frozen=True, slots=True)
class Latency:
    """Seconds from a comment's creation, medians and p99 over one ingress's comments."""

    p50: float
    p99: float
    received_p50: float  # the webhook receiver had it (webhook ingress only)
    taken_p50: float  # a cycle took it up (`dispatch.queued`)


@dataclass(frozen=True, slots=True)
class Counted:
    pasted_once: int
    lost: int
    duplicated: int


def counted(sent: Sequence[Sent], pastes: Iterable[dict[str, Any]]) -> Counted:
    """Each comment's pastes, from the harnesses' own records."""
    count = Counter(str(p["delivery"]) for p in pastes)
    return Counted(
        pasted_once=sum(count[s.delivery] == 1 for s in sent),
        lost=sum(count[s.delivery] == 0 for s in sent),
        duplicated=sum(count[s.delivery] > 1 for s in sent),
    )


def latencies(sent: Sequence[Sent], pastes: Iterable[dict[str, Any]], log: Path) -> dict[Ingress, Latency]:
    first: dict[str, float] = {}
    for paste in pastes:
        first.setdefault(str(paste["delivery"]), float(paste["at"]))
    marks = _marks(log)
    found = {}
    for ingress in Ingress:
        mine = [s for s in sent if s.ingress is ingress]

        def after(table: dict[str, float], chosen: list[Sent] = mine) -> list[float]:
            return [table[s.delivery] - s.created for s in chosen if s.delivery in table]

        whole = after(first)
        found[ingress] = Latency(
            p50=percentile(whole, 0.5),
            p99=percentile(whole, 0.99),
            received_p50=percentile(after(marks["webhook.received"]), 0.5),
            taken_p50=percentile(after(marks["dispatch.queued"]), 0.5),
        )
    return found


def _marks(log: Path) -> dict[str, dict[str, float]]:
    """Per event name, the first time each delivery id met it."""
    marks: dict[str, dict[str, float]] = {"webhook.received": {}, "dispatch.queued": {}}
    if not log.exists():
        return marks
    for line in log.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        table = marks.get(event.get("event", ""))
        if table is not None and "delivery_id" in event:
            moment = datetime.fromisoformat(event["ts"].replace("Z", "+00:00"))
            table.setdefault(event["delivery_id"], moment.timestamp())
    return marks
