"""One run at one scale: start the daemon, let it spawn every session, measure idle cycles, then
the comment stream, then wait for every comment to be pasted and count what arrived how often."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.load.daemon import LoadDaemon, Usage
from bench.load.figures import Figures, percentile
from bench.load.github import LoadGitHub
from bench.load.latency import counted, latencies
from bench.load.stream import Ingress, Sent, stream

SECRET = "load-campaign-secret"
MIB = 1024.0


@dataclass(frozen=True, slots=True)
class Form:
    """How big and how long: the short form is CI's smoke test, the long one gives the figures."""

    scales: tuple[int, ...]  # labelled items, over every repository together
    sessions: int
    repos: int
    rate: float  # comments a second
    seconds: float  # of the stream
    interval: int  # polling.intervalSeconds
    idle_cycles: int
    drain_seconds: float = 120.0


@dataclass(frozen=True, slots=True)
class Window:
    """What the daemon spent between two instants: CPU, cycles finished, requests served."""

    usage: Usage
    cycles: list[float]
    requests: int
    budget: int
    seconds: float

    def per_cycle(self, value: float) -> float:
        return value / max(1, len(self.cycles))


class Meter:
    def __init__(self, daemon: LoadDaemon, github: LoadGitHub) -> None:
        self.daemon, self.github = daemon, github

    def window(self, act: Callable[[], object]) -> Window:
        usage, cycles, (requests, budget), started = self._now()
        act()
        usage2, cycles2, (requests2, budget2), ended = self._now()
        return Window(usage2 - usage, cycles2[len(cycles) :], requests2 - requests, budget2 - budget, ended - started)

    def cycles_pass(self, count: int) -> None:
        """Until `count` more cycles finished (a window starts right after one finished)."""
        target = len(self.daemon.cycles()) + count
        self.daemon.wait_for(lambda: len(self.daemon.cycles()) >= target, timeout=600, what=f"{count} cycles")

    def _now(self) -> tuple[Usage, list[float], tuple[int, int], float]:
        return self.daemon.usage(), self.daemon.cycles(), self.github.counters(), time.monotonic()


def run_scale(folder: Path, form: Form, items: int) -> Figures:
    sessions = min(form.sessions, items)
    (folder / "github").mkdir(parents=True)
    github = LoadGitHub(folder / "github", repos=form.repos, items=items, sessions=sessions, secret=SECRET)
    daemon = LoadDaemon(folder, github, interval=form.interval, secret=SECRET)
    started = time.monotonic()
    daemon.start()
    try:
        daemon.wait_for(lambda: len(_harnesses(daemon)) >= sessions, timeout=900, what=f"{sessions} sessions")
        spawn_s = time.monotonic() - started
        meter = Meter(daemon, github)
        meter.cycles_pass(2)  # the first cycle (every spawn confirmed) and the one reading past it are over
        idle = meter.window(lambda: meter.cycles_pass(form.idle_cycles))
        sent: list[Sent] = []

        def under_stream() -> None:
            """The stream, then until every comment was pasted and one more cycle (its reactions) ran."""
            sent.extend(stream(github, port=daemon.port, rate=form.rate, seconds=form.seconds))
            _drain(daemon, {s.delivery for s in sent}, form.drain_seconds)
            meter.cycles_pass(1)

        busy = meter.window(under_stream)
        rss, peak = daemon.memory()
    finally:
        daemon.stop()
        github.close()
    return _figures(form, items, sessions, spawn_s, idle, busy, sent, daemon, rss, peak)


def _drain(daemon: LoadDaemon, wanted: set[str], seconds: float) -> None:
    """Until every comment was pasted, or `seconds` passed: what is missing then counts as lost."""
    deadline = time.monotonic() + seconds
    while daemon.alive() and time.monotonic() < deadline:
        if wanted <= {str(p["delivery"]) for p in daemon.pastes()}:
            return
        time.sleep(0.5)


def _harnesses(daemon: LoadDaemon) -> set[object]:
    """Harnesses that recorded their first prompt: the spawn's, on its argv."""
    return {p["pid"] for p in daemon.pastes()}


def _figures(
    form: Form,
    items: int,
    sessions: int,
    spawn_s: float,
    idle: Window,
    busy: Window,
    sent: list[Sent],
    daemon: LoadDaemon,
    rss: int,
    peak: int,
) -> Figures:
    pastes = daemon.pastes()
    latency = latencies(sent, pastes, daemon.events_log)
    poll, webhook = latency[Ingress.POLL], latency[Ingress.WEBHOOK]
    count = counted(sent, pastes)
    idle_cycle = percentile(idle.cycles, 0.5)
    hour = 3600.0
    return Figures(
        items=items,
        sessions=sessions,
        idle_cycles=len(idle.cycles),
        idle_cycle_s=idle_cycle,
        idle_cpu_s=idle.per_cycle(idle.usage.own),
        idle_children_cpu_s=idle.per_cycle(idle.usage.children),
        idle_requests_per_cycle=idle.per_cycle(idle.requests),
        busy_cycles=len(busy.cycles),
        busy_cycle_s=percentile(busy.cycles, 0.5),
        busy_cycle_max_s=max(busy.cycles, default=float("nan")),
        busy_cpu_s=busy.per_cycle(busy.usage.own),
        busy_children_cpu_s=busy.per_cycle(busy.usage.children),
        rss_mib=rss / MIB,
        peak_rss_mib=peak / MIB,
        poll_p50_s=poll.p50,
        poll_p99_s=poll.p99,
        poll_taken_p50_s=poll.taken_p50,
        webhook_p50_s=webhook.p50,
        webhook_p99_s=webhook.p99,
        webhook_received_p50_s=webhook.received_p50,
        webhook_taken_p50_s=webhook.taken_p50,
        requests_per_hour=busy.requests * hour / busy.seconds,
        budget_per_hour=busy.budget * hour / busy.seconds,
        idle_requests_per_hour=idle.per_cycle(idle.requests) * hour / (form.interval + idle_cycle),
        budget_per_comment=busy.budget / max(1, len(sent)),
        sent=len(sent),
        pasted_once=count.pasted_once,
        lost=count.lost,
        duplicated=count.duplicated,
        spawn_s=spawn_s,
    )
