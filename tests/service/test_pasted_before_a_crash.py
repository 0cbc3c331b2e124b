"""Found by the kill campaign (bench/chaos --receipts none): a harness without receipts whose
prompt the ledger already says went in is not pasted it again after a crash while its confirmation
was awaited — it is confirmed as any paste is, by its harness still running `confirmSeconds` later.
What remains at-least-once is a crash between the paste and that ledger write.

Found by the kill campaign with opencode (bench.chaos --harness opencode): a harness with receipts
whose receipt comes a moment after the paste (opencode's TUI hands the prompt to its server first)
was pasted the comment again by the poller that restarted within that moment. The wait the crash
cut is made again before any paste."""

from __future__ import annotations

from domain.events import Event
from domain.ledger import DeliveryState, Resolution
from domain.refs import WorkItemRef
from tests.fakes.receipts import FakeReceipts
from tests.service.world import World


def pasted_then_crashed(world: World, *, receipt_after: float | None = 0.0) -> tuple[WorkItemRef, str]:
    """`receipt_after`: seconds the harness takes to confirm the paste (with receipts); None: never."""
    ref = world.watched()
    assert isinstance(world.receipts, FakeReceipts)
    world.receipts.prompt_after = receipt_after or 0.0
    world.receipts.ignore_pastes = receipt_after is None
    comment = world.comment(ref, "please look at TOKEN-1")
    world.crash_after("dispatch.pasted")
    pending = world.ledger(ref).pending_entry(comment.id)
    assert pending is not None and pending.state is DeliveryState.PASTED
    return ref, comment.id


def test_a_prompt_pasted_before_a_crash_into_a_harness_still_running_is_not_pasted_again() -> None:
    world = World(harness="cursor")
    ref, comment_id = pasted_then_crashed(world)

    world.cycle()

    assert [p.count("TOKEN-1") for p in world.session(ref).received] == [1]
    assert world.ledger(ref).resolved[comment_id].kind is Resolution.DELIVERED
    assert world.events.named(Event.DISPATCH_CONFIRMED)[-1]["confirmed_by"] == "alive-on-retry"


def test_a_prompt_pasted_before_a_crash_into_a_harness_gone_since_is_delivered_again() -> None:
    world = World(harness="cursor")
    ref, comment_id = pasted_then_crashed(world)
    world.tmux.exit_harness(ref.target.name)

    world.cycle()

    assert "TOKEN-1" in world.session(ref).prompt  # respawned with it: the gone harness may never have read it
    assert world.ledger(ref).resolved[comment_id].kind is Resolution.DELIVERED


def test_a_prompt_pasted_before_a_crash_whose_receipt_comes_late_is_confirmed_by_it_not_pasted_again() -> None:
    world = World()
    ref, comment_id = pasted_then_crashed(world, receipt_after=2.0)  # the harness ready long since

    world.cycle()

    assert [p.count("TOKEN-1") for p in world.session(ref).received] == [1]
    assert world.ledger(ref).resolved[comment_id].kind is Resolution.DELIVERED
    assert world.events.named(Event.DISPATCH_CONFIRMED)[-1]["confirmed_by"] == "receipt-on-retry"


def test_a_prompt_pasted_before_a_crash_that_never_gets_a_receipt_is_pasted_again_once_its_wait_is_over() -> None:
    world = World()
    ref, _ = pasted_then_crashed(world, receipt_after=None)  # the paste never reached the agent
    started, pastes = world.clock.monotonic(), []
    world.tmux.listeners.append(lambda what, pane, text: pastes.append(world.clock.monotonic() - started))

    world.cycle()

    assert len(pastes) == 1 and pastes[0] >= world.harnesses["claude"].confirm_seconds  # after the cut wait
    assert [p.count("TOKEN-1") for p in world.session(ref).received] == [1, 1]
