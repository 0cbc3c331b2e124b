"""Found by the kill campaign (bench/chaos --receipts none): a harness without receipts whose
prompt the ledger already says went in is not pasted it again after a crash while its confirmation
was awaited — it is confirmed as any paste is, by its harness still running `confirmSeconds` later.
What remains at-least-once is a crash between the paste and that ledger write."""

from __future__ import annotations

from domain.ledger import DeliveryState, Resolution
from domain.refs import WorkItemRef
from tests.service.world import World


def pasted_then_crashed(world: World) -> tuple[WorkItemRef, str]:
    ref = world.watched()
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
    assert world.events.named("dispatch.confirmed")[-1]["confirmed_by"] == "alive-on-retry"


def test_a_prompt_pasted_before_a_crash_into_a_harness_gone_since_is_delivered_again() -> None:
    world = World(harness="cursor")
    ref, comment_id = pasted_then_crashed(world)
    world.tmux.exit_harness(ref.target.name)

    world.cycle()

    assert "TOKEN-1" in world.session(ref).prompt  # respawned with it: the gone harness may never have read it
    assert world.ledger(ref).resolved[comment_id].kind is Resolution.DELIVERED
