"""The state store backends the contract suite runs against, and two writers racing on one of them."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path

from adapters.postgres.store import PostgresStateStore
from adapters.sqlite.store import SqliteStateStore
from domain.errors import StaleWrite
from domain.ports import StateStore
from domain.refs import WorkItemRef

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True, slots=True)
class Backend:
    """One implementation of the port: how to open it, and how another process opens the same
    store (`spec`; empty for the in-memory fake, which has no second process)."""

    name: str
    open: Callable[[], StateStore]
    spec: str = ""


def open_spec(spec: str) -> StateStore:
    kind, _, where = spec.partition(":")
    if kind == "sqlite":
        return SqliteStateStore(Path(where))
    if kind == "postgres":
        return PostgresStateStore(where)
    raise ValueError(f"no state store backend {spec!r}")


def write_from_what_was_read(store: StateStore, item: WorkItemRef, mark: int, ready: Callable[[], None]) -> str:
    """Read the item's ledger, wait for the starting signal, save a marked change of it."""
    ledger = store.ledger(item)
    assert ledger is not None
    ready()
    try:
        store.save_ledger(replace(ledger, baseline_at=ledger.baseline_at + timedelta(minutes=mark)))
    except StaleWrite:
        return "stale"
    return f"won {mark}"


RACER = """
import sys, time
from pathlib import Path
from tests.contract.state_backends import open_spec, write_from_what_was_read
from domain.refs import WorkItemRef
spec, item, mark, ready, go = sys.argv[1:]
def wait():
    Path(ready).touch()
    while not Path(go).exists():
        time.sleep(0.005)
print(write_from_what_was_read(open_spec(spec), WorkItemRef.parse(item), int(mark), wait))
"""


def race_two_writers(backend: Backend, store: StateStore, item: WorkItemRef, scratch: Path) -> list[str]:
    """Two writers read the same version, then both save: two processes, or two threads for the fake."""
    if not backend.spec:
        barrier = threading.Barrier(2)
        outcomes: list[str] = []

        def one(mark: int) -> None:
            outcomes.append(write_from_what_was_read(store, item, mark, barrier.wait))

        threads = [threading.Thread(target=one, args=(mark,)) for mark in (1, 2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return outcomes
    go = scratch / "go"
    ready = [scratch / f"ready-{mark}" for mark in (1, 2)]
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, backend.spec, str(item), str(mark), str(flag), str(go)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for mark, flag in zip((1, 2), ready, strict=True)
    ]
    deadline = time.monotonic() + 60
    while not all(flag.exists() for flag in ready) and time.monotonic() < deadline:
        time.sleep(0.005)
    go.touch()
    return [racer.communicate(timeout=60)[0].strip() for racer in racers]


def increment(store: StateStore, times: int) -> None:
    """Read-modify-write a counter in meta, each step in a transaction."""
    for _ in range(times):
        with store.transaction():
            store.save_meta("count", str(int(store.meta().get("count", "0")) + 1))


COUNTER = """
import sys
from tests.contract.state_backends import increment, open_spec
increment(open_spec(sys.argv[1]), int(sys.argv[2]))
"""


def count_in_two_processes(backend: Backend, times: int) -> list[int]:
    """Two processes incrementing the same counter; their exit statuses."""
    argv = [sys.executable, "-c", COUNTER, backend.spec, str(times)]
    workers = [subprocess.Popen(argv, cwd=ROOT) for _ in range(2)]
    return [worker.wait(timeout=120) for worker in workers]


def count_in_threads(store: StateStore, threads: int, times: int) -> None:
    running = [threading.Thread(target=increment, args=(store, times)) for _ in range(threads)]
    for thread in running:
        thread.start()
    for thread in running:
        thread.join()
