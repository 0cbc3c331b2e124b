"""No queue behind a confirmation, on real tmux 3.3 and the harness simulator without receipts: the second of two
back-to-back comments is pasted while the first's "still alive" wait runs; each is confirmed on
its own, in order, each pasted once."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

from adapters.receipts.files import FileReceipts
from domain.events import Event
from domain.ledger import Resolution
from domain.model import HarnessSpec
from domain.receipts import ReceiptMode
from domain.webhook import Pushed
from tests.fakes.clock import FakeClock
from tests.service.world import World
from tests.tmux_support import SIM, RealTmux, real_tmux, records

__all__ = ["real_tmux"]


class _SleepingClock(FakeClock):
    """Wall time is fake, but a wait really waits (the harness needs it to start)."""

    def __init__(self) -> None:
        super().__init__()
        self.during_sleep = lambda: None

    def sleep(self, seconds: float) -> None:
        self.during_sleep()
        time.sleep(seconds)
        super().sleep(seconds)


def test_on_real_tmux_a_second_comment_is_pasted_before_the_first_is_confirmed(
    real_tmux: RealTmux, tmp_path: Path
) -> None:
    record = tmp_path / "record.jsonl"
    sim = HarnessSpec(
        "sim",
        sys.executable,
        (str(SIM), "--record", str(record)),
        ("--session-id", "{session_id}"),
        receipts=ReceiptMode.NONE,
        ready_seconds=1,
        confirm_seconds=2,
    )
    clock = _SleepingClock()
    world = World(
        tmux=real_tmux.adapter(),  # type: ignore[arg-type]
        harness="sim",
        harnesses={"sim": sim},
        clock=clock,
        workdir=str(tmp_path),
        receipts=FileReceipts(tmp_path / "receipts"),
    )
    ref = world.watched()
    first, second = world.comment(ref, "first TOKEN-1"), world.comment(ref, "second TOKEN-2")
    intake = world.intake()
    pushed = threading.Event()

    def push_the_second() -> None:  # by webhook, once the first is pasted and its wait runs
        pasted = {e.get("comment_id") for e in world.events.named(Event.DISPATCH_PASTED)}
        if first.id in pasted and not pushed.is_set():
            pushed.set()
            intake.accept(Pushed(second, frozenset({"loop"})))
            world.poll.run_kept()

    clock.during_sleep = push_the_second
    intake.accept(Pushed(first, frozenset({"loop"})))
    world.poll.run_kept()

    order = [(e["event"], e.get("comment_id")) for e in world.events.records if e["event"].startswith("dispatch.")]
    assert order.index(("dispatch.pasted", second.id)) < order.index(("dispatch.confirmed", first.id)), order
    confirmed = [c for e, c in order if e == "dispatch.confirmed" and c in {first.id, second.id}]
    assert confirmed == [first.id, second.id]
    ledger = world.ledger(ref)
    assert ledger.resolved[first.id].kind is Resolution.DELIVERED
    assert ledger.resolved[second.id].kind is Resolution.DELIVERED
    pastes = [str(r["text"]) for r in records(record) if r["kind"] == "paste" and "TOKEN-" in str(r["text"])]
    assert len(pastes) == 2 and "TOKEN-1" in pastes[0] and "TOKEN-2" in pastes[1]
