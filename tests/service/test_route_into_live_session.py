"""decision-route-into-live-session.md: points 1–4 and the loud first-spawn refusal."""

from __future__ import annotations

from domain.events import Event
from domain.ledger import Resolution
from domain.model import SessionState
from tests.service.world import World


def test_decision_1_unanswered_probe_is_unknown_so_the_paste_is_tried_and_fails_transiently() -> None:
    world = World()
    ref = world.watched()
    world.tmux.unresponsive_targets.add(ref.target.name)
    comment = world.comment(ref)

    world.cycle()

    assert ("deliver", ref.target.name) in world.tmux.calls
    assert world.events.named(Event.DISPATCH_FAILED)[0]["will_retry"] is True
    assert world.ledger(ref).attempts(comment.id) == 1


def test_decision_2_a_live_occupant_on_the_respawn_path_is_never_killed_nor_typed_into() -> None:
    world = World()
    ref = world.watched()
    world.vanish(ref)
    occupant_name = ref.target.name
    world.tmux.occupy_on_next_spawn(occupant_name, dead=False)
    comment = world.comment(ref)

    world.cycle()

    occupant = world.tmux.sessions[occupant_name].panes[0]
    assert occupant.argv == ("sh",) and not occupant.dead
    assert occupant.received == []  # a pane not proven the harness's gets nothing
    assert world.kills() == 0
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED  # the harness's own window


def test_decision_2_first_spawn_against_a_live_occupant_fails_loudly_and_retries_then_says_so_on_the_item() -> None:
    world = World()
    ref = world.item()
    world.tmux.add_session(ref.target.name)

    for _ in range(3):  # polling.maxRetries of the item's start
        world.cycle()

    refusals = world.events.named(Event.SESSION_SPAWN_FAILED)
    assert len(refusals) == 3 and all(r["level"] == "error" and "sessions reset" in r["remedy"] for r in refusals)
    assert [f["outcome"] for f in world.events.named(Event.DISPATCH_FAILED)] == ["spawn-refused"] * 3
    assert world.store.session(ref) is None  # a refused first spawn leaves no record
    assert world.tmux.session_state(ref.target) is SessionState.LIVE
    assert world.tmux.sessions[ref.target.name].received == []
    (notice,) = world.tracker.posted
    assert "could not be started" in notice[1] and world.ledger(ref).start is None


def test_decision_3_only_a_dead_reading_licenses_kill_session() -> None:
    live, unknown = World(), World()
    for world, setup in ((live, None), (unknown, "unresponsive")):
        ref = world.watched()
        if setup:
            world.tmux.unresponsive_targets.add(ref.target.name)
        world.comment(ref)
        world.cycle()

    assert live.kills() == 0 and unknown.kills() == 0


def test_decision_3_a_failed_clear_of_a_session_that_is_gone_anyway_counts_as_cleared() -> None:
    world = World()
    ref = world.watched()
    world.tmux.exit_harness(ref.target.name)
    original_clear = world.tmux.clear_dead

    def clear_reports_failure_but_works(target):  # type: ignore[no-untyped-def]
        try:
            original_clear(target)
        finally:
            raise __import__("domain.errors", fromlist=["TmuxFailed"]).TmuxFailed("kill-pane", 1, "lost")

    world.tmux.clear_dead = clear_reports_failure_but_works  # type: ignore[method-assign]
    comment = world.comment(ref)

    world.cycle()

    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    assert world.tmux.session_state(ref.target) is SessionState.LIVE


def test_decision_4_duplicate_session_makes_an_unknown_occupant_count_as_live() -> None:
    world = World()
    ref = world.watched()
    world.vanish(ref)
    world.tmux.occupy_on_next_spawn(ref.target.name, dead=False)
    original_spawn = world.tmux.spawn

    def spawn_then_go_silent(request):  # type: ignore[no-untyped-def]
        try:
            return original_spawn(request)
        finally:
            world.tmux.unresponsive_targets.add(ref.target.name)

    world.tmux.spawn = spawn_then_go_silent  # type: ignore[method-assign]
    comment = world.comment(ref)

    world.cycle()

    # the occupant could not be probed after the refusal: it is treated as live, never killed
    assert world.kills() == 0
    assert world.spawns() == 2
    assert world.tmux.sessions[ref.target.name].panes[0].received == []
    assert world.ledger(ref).attempts(comment.id) == 1  # no spawn, no paste: retried
