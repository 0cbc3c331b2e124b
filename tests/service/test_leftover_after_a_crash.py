"""Found by the kill campaign with opencode (bench.chaos --harness opencode): a resumed harness
whose resume was being judged when the daemon died was recorded without its process group. Its tmux
server killed later, it lived on for seconds (opencode finishing a prompt after SIGHUP), the respawn
did not end it, and it took a comment into the conversation beside its successor (2 of 1033
comments twice). A spawn's group is recorded as soon as tmux runs it; one adopted after a crash cut
even that is learnt when the-loop next finds it."""

from __future__ import annotations

from dataclasses import replace

from domain.events import Event
from domain.refs import WorkItemRef
from tests.service.world import CLAUDE, World

OUTLIVING = replace(CLAUDE, args=("--outlive",))  # its process outlives its session, as opencode's may


def world() -> World:
    return World(harnesses={"claude": OUTLIVING})


def resumed_then_crashed(world: World) -> WorkItemRef:
    """Spawned, its session killed, then respawned by a comment: the daemon dies while it judges the resume."""
    ref = world.watched()
    world.tmux.kill(ref.target)
    world.comment(ref, "carry on")
    world.crash_in(world.watch, "wait_ready")
    return ref


def test_a_harness_whose_resume_was_judged_when_the_daemon_died_is_ended_before_the_next_respawn() -> None:
    w = world()
    ref = resumed_then_crashed(w)
    assert len(w.events.named(Event.SESSION_LEFTOVER_ENDED)) == 1  # the first one's, before this respawn
    w.tmux.kill(ref.target)  # the resumed one outlives its session too
    w.comment(ref, "and again")

    w.cycle()

    assert w.tmux.outliving == set()  # nothing of either is left running beside the new one
    assert len(w.events.named(Event.SESSION_LEFTOVER_ENDED)) == 2


def test_a_harness_adopted_after_a_crash_cut_its_spawns_record_has_its_group_learnt() -> None:
    w = world()
    ref = resumed_then_crashed(w)
    w.store.save_session(replace(w.record(ref), harness_group="", pane_id=""))  # as if cut before even that
    w.comment(ref, "while it runs")

    w.cycle()  # pasted into the harness the-loop finds by its mark

    assert w.record(ref).harness_group == w.tmux.harness_group(
        ref.target, pane=w.record(ref).pane_id, mark=w.record(ref).spawn_id
    )
    assert w.record(ref).harness_group != ""
