"""Found by the kill campaign (bench/chaos --receipts none, seed 1824894858): a repository's comment
stream starts where the first cycle found it, but that starting point was saved only once the
whole first cycle was done. A poller killed during its first cycle (or a first cycle in which one
item failed) left none saved, so the next run started the stream anew, at its own "now", and the
comments written in between were never seen: lost, with no notice."""

from __future__ import annotations

import contextlib

from domain.ledger import Resolution
from tests.service.world import World


def test_comments_written_while_the_first_cycle_was_cut_short_are_delivered_by_the_next_run() -> None:
    world = World()
    ref = world.item()
    original = world.events.emit

    def killed_mid_cycle(event, **fields):  # type: ignore[no-untyped-def]
        original(event, **fields)
        if event.value == "session.spawned":
            comment_ids.append(world.comment(ref, "written during the first cycle").id)
            raise KeyboardInterrupt  # the poller is SIGKILLed

    comment_ids: list[str] = []
    world.events.emit = killed_mid_cycle  # type: ignore[method-assign]
    with contextlib.suppress(KeyboardInterrupt):
        world.cycle()
    world.events.emit = original  # type: ignore[method-assign]
    comment_ids.append(world.comment(ref, "written before the next run").id)
    world.restart(version=world.version)

    world.cycle()

    resolved = world.ledger(ref).resolved
    assert [resolved[cid].kind if cid in resolved else None for cid in comment_ids] == [Resolution.DELIVERED] * 2
