"""Found by the kill campaign with the real opencode on a loaded machine (`bench.chaos --harness
opencode`, seed 2019260868): after their harnesses were killed, two items' conversations were
resumed at once, and neither said it was ready within its `readySeconds` (30 s; opencode's healthy
starts took up to 65 s at load 26). Each resume was judged failed: its live harness was SIGKILLed
and a fresh conversation started in its place, dropping every earlier comment's context. Slow
under load is not failed: a resume still running past its `readySeconds` is kept, as a new start
is, and its prompt (on its command line) is confirmed within the start's whole time."""

from __future__ import annotations

from domain.events import Event
from domain.ledger import Resolution
from tests.service.world import CLAUDE, World


def test_a_resume_slower_than_its_ready_seconds_is_kept_alive_with_its_conversation() -> None:
    world = World()
    ref = world.watched()
    world.vanish(ref)  # its harness is gone: the next comment resumes its conversation
    world.receipts.ready_after = CLAUDE.ready_seconds + 10  # alive, and ready only after its readySeconds
    comment = world.comment(ref, "please look at TOKEN-4")

    world.cycle()

    assert [call for call in world.tmux.calls if call[0] == "terminate_harness"] == []
    assert world.events.named(Event.SESSION_RESUME_FAILED) == []
    assert [e["resumed"] for e in world.events.named(Event.SESSION_RESPAWNED)] == [True]
    assert world.record(ref).harness_session_id == "sid-1"  # the conversation that holds the earlier comments
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    assert world.spawns() == 2  # its first start, and the one resume: no fresh conversation beside it


def test_a_resume_that_never_says_it_is_ready_is_ended_once_hung_not_at_its_ready_seconds() -> None:
    world = World()
    ref = world.watched()
    world.vanish(ref)
    world.receipts.never_ready = True  # it hangs in its start: no hook ever fires
    world.comment(ref, "please look at TOKEN-5")

    world.cycle()

    resumed = world.record(ref)
    assert [call for call in world.tmux.calls if call[0] == "terminate_harness"] == []  # slow so far, not failed
    assert [e["resumed"] for e in world.events.named(Event.SESSION_RESPAWNED)] == [True]
    world.receipts.never_ready = False  # a start from now on gets ready as usual
    for _ in range(world.max_retries + 1):
        world.cycle()

    (not_ready,) = world.events.named(Event.SESSION_NOT_READY)
    assert not_ready["spawn_id"] == resumed.spawn_id
    assert not_ready["reason"] == f"not ready {CLAUDE.hung_seconds:g}s after its spawn: ended and started again"
    assert world.record(ref).spawn_id != resumed.spawn_id, "the hung resume was left in place"
