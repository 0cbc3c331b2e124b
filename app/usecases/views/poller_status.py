"""`status`: is a poller running (the lock says), how did its last cycle go (the heartbeat says)."""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from app.usecases.views.rate_budgets import Budgets
from domain.budget import InstallationBudget, RateBudget
from domain.durations import duration

# A cycle may run long (first sight of many items, a slow tmux): overdue only well past the interval.
OVERDUE_SLACK_SECONDS = 30.0


def overdue_after(interval_seconds: float) -> float:
    """How long a poller cycling every `interval_seconds` may stay quiet before it is overdue."""
    return 2 * interval_seconds + OVERDUE_SLACK_SECONDS


def is_overdue(quiet_for: float | None, interval_seconds: float) -> bool:
    """Whether a poller quiet for `quiet_for` seconds (None: not known) is overdue: `status`'s rule,
    and the fleet page's."""
    return quiet_for is not None and quiet_for > overdue_after(interval_seconds)


class Exit(enum.IntEnum):
    """`status` exit codes, LSB-like (`systemctl status`): scripts can test without parsing."""

    RUNNING = 0
    NOT_RUNNING = 3
    OVERDUE = 4  # a poller holds the lock but no cycle finished in time: stuck, or very slow
    FAILING = 5  # a poller holds the lock and says its cycles fail (it notes why in the lock)


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """What the daemon writes after each cycle (state store meta key `heartbeat`)."""

    pid: int
    started: str
    interval_seconds: float
    cycle_started: datetime
    cycle_finished: datetime
    summary: Mapping[str, int]
    finished_monotonic: float | None = None  # the machine's CLOCK_MONOTONIC when it was written
    budgets: Mapping[str, RateBudget] = field(default_factory=dict)  # per tracker host, as last stated
    installation_budgets: tuple[InstallationBudget, ...] = ()  # App mode: per installation instead

    @property
    def rate_budgets(self) -> Budgets:
        return Budgets(self.budgets, self.installation_budgets)

    @classmethod
    def parse(cls, text: str | None) -> Heartbeat | None:
        """None when absent or unreadable: a missing heartbeat only means 'no cycle known'."""
        if not text:
            return None
        try:
            beat = json.loads(text)
            rates = Budgets.parse(beat)
            return cls(
                pid=int(beat["pid"]),
                started=str(beat["started"]),
                interval_seconds=float(beat["interval_seconds"]),
                cycle_started=datetime.fromisoformat(beat["last_cycle_started"]),
                cycle_finished=datetime.fromisoformat(beat["last_cycle_finished"]),
                summary={str(k): int(v) for k, v in dict(beat["summary"]).items()},
                finished_monotonic=_number(beat.get("last_cycle_finished_monotonic")),
                budgets=rates.hosts,
                installation_budgets=rates.installations,
            )
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True, slots=True)
class PollerStatus:
    holder: Mapping[str, Any] | None  # what the running poller wrote into its lock
    heartbeat: Heartbeat | None
    now: datetime
    interval_seconds: float
    monotonic: float | None = None  # this process's CLOCK_MONOTONIC: one clock for the whole machine

    @property
    def running(self) -> bool:
        return self.holder is not None

    @property
    def overdue_after(self) -> float:
        return overdue_after(self.interval_seconds)

    @property
    def quiet_for(self) -> float | None:
        """Seconds since the running poller last showed life: its last cycle, else its start —
        on the monotonic clock when both sides have it (a wall clock stepped by NTP or by hand
        would make a stuck poller look on time, or a working one overdue), else the wall clock."""
        if self.holder is None:
            return None
        beat = self.heartbeat
        # a heartbeat left by an earlier poller says nothing about this one
        ours = beat if beat and beat.started == self.holder.get("started") else None
        ticks = ours.finished_monotonic if ours else _number(self.holder.get("started_monotonic"))
        if self.monotonic is not None and ticks is not None:
            return self.monotonic - ticks
        since = ours.cycle_finished if ours else _time(self.holder.get("started"))
        return None if since is None else (self.now - since).total_seconds()

    @property
    def overdue(self) -> bool:
        return is_overdue(self.quiet_for, self.interval_seconds)

    @property
    def failing(self) -> Mapping[str, Any] | None:
        """What the running poller noted in its lock while its cycles fail: since, cycles, cause."""
        found = (self.holder or {}).get("failing")
        return found if isinstance(found, dict) else None

    @property
    def exit(self) -> Exit:
        if not self.running:
            return Exit.NOT_RUNNING
        if self.failing:
            return Exit.FAILING
        return Exit.OVERDUE if self.overdue else Exit.RUNNING

    def as_json(self) -> dict[str, Any]:
        holder = self.holder or {}
        beat = self.heartbeat
        return {
            "running": self.running,
            "pid": holder.get("pid"),
            "started": holder.get("started"),
            "version": holder.get("version"),
            "interval_seconds": self.interval_seconds,
            "overdue": self.overdue,
            "overdue_after_seconds": self.overdue_after,
            "failing": self.failing,
            "last_cycle": None
            if beat is None
            else {
                "pid": beat.pid,
                "started": beat.cycle_started.isoformat(),
                "finished": beat.cycle_finished.isoformat(),
                "seconds_ago": round((self.now - beat.cycle_finished).total_seconds(), 3),
                "duration_seconds": round((beat.cycle_finished - beat.cycle_started).total_seconds(), 3),
                "summary": dict(beat.summary),
            },
        } | (beat.rate_budgets if beat else Budgets()).as_json()


def poller_status(
    *,
    holder: Mapping[str, Any] | None,
    heartbeat_text: str | None,
    now: datetime,
    interval_seconds: float,
    monotonic: float | None = None,
) -> PollerStatus:
    """The status; a running poller's own interval wins over this configuration's."""
    beat = Heartbeat.parse(heartbeat_text)
    if holder is not None and beat is not None and beat.started == holder.get("started"):
        interval_seconds = beat.interval_seconds
    return PollerStatus(holder=holder, heartbeat=beat, now=now, interval_seconds=interval_seconds, monotonic=monotonic)


def describe(status: PollerStatus) -> list[str]:
    """The lines `status` shows a person."""
    holder = status.holder
    if holder is None:
        lines = ["not running"]
    else:
        started = _time(holder.get("started"))
        since = f" ({ago(status.now - started)})" if started else ""
        lines = [
            f"running: pid {holder.get('pid', '?')}, started {_shown(started)}{since}, version "
            f"{holder.get('version', '?')}"
        ]
    beat = status.heartbeat
    if beat is None:
        lines.append("last cycle: none recorded")
    else:
        took = (beat.cycle_finished - beat.cycle_started).total_seconds()
        counts = " ".join(f"{key}={value}" for key, value in beat.summary.items())
        lines.append(
            f"last cycle: {_shown(beat.cycle_finished)} ({ago(status.now - beat.cycle_finished)}, "
            f"pid {beat.pid}), took {took:.1f}s: {counts}"
        )
    if beat is not None:
        lines += [f"GitHub budget: {line}" for line in beat.rate_budgets.lines()]
    if status.running:
        verdict = "OVERDUE" if status.overdue else "on time"
        lines.append(
            f"{verdict}: cycles every {status.interval_seconds:g}s; overdue after {status.overdue_after:g}s without one"
        )
    if status.failing:
        failing = status.failing
        lines.append(
            f"FAILING: {failing.get('cycles', '?')} cycles in a row since {_shown(_time(failing.get('since')))}: "
            f"{failing.get('cause', '?')}"
        )
    return lines


def ago(delta: timedelta) -> str:
    return f"{duration(delta.total_seconds(), parts=1)} ago"


def _time(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        return None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _shown(when: datetime | None) -> str:
    return "?" if when is None else when.strftime("%Y-%m-%d %H:%M:%S %Z").strip()
