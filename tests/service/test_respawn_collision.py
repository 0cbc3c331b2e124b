"""respawn-collision-bugfix.md AC1–AC12, proved through the poll cycle over fakes."""

from __future__ import annotations

from domain.errors import TmuxFailed
from domain.events import Event
from domain.ledger import Resolution
from domain.model import Probe, SessionState, SpawnRequest
from domain.refs import TmuxTarget
from tests.fakes.tmux import FakeTmux, resume_fails_unless_known
from tests.service.world import World


class FirstProbeSaysDead(FakeTmux):
    """tmux reports the harness pane dead once, then tells the truth (it runs): the respawn path's
    second probe is what sees it."""

    def __init__(self) -> None:
        super().__init__()
        self.lie_once: set[str] = set()

    def probe(self, target: TmuxTarget, *, mark: str, pane: str = "") -> Probe:
        if target.name in self.lie_once:
            self.lie_once.discard(target.name)
            self.calls.append(("probe", target.name))
            return Probe(SessionState.DEAD, SessionState.DEAD, pane)
        return super().probe(target, mark=mark, pane=pane)


class SpawnFails(FakeTmux):
    def spawn(self, request: SpawnRequest) -> str:
        self.calls.append(("spawn", request.target.name))
        raise TmuxFailed("new-session", 1, "create window failed: fork failed")


def test_ac1_an_unanswered_probe_is_unknown_and_never_starts_a_respawn() -> None:
    world = World()
    ref = world.watched()
    world.tmux.unresponsive_targets.add(ref.target.name)
    world.comment(ref)

    world.cycle()

    assert world.tmux.session_state(ref.target) is SessionState.UNKNOWN
    assert world.spawns() == 1  # only the first-sight spawn
    assert world.kills() == 0
    assert Event.SESSION_RESPAWNED not in world.events.names()


def test_ac2_reporters_scenario_busy_live_session_is_retried_then_delivered_once() -> None:
    world = World()
    ref = world.watched()
    world.tmux.unresponsive_targets.add(ref.target.name)
    comment = world.comment(ref)

    world.cycle()
    failed = world.events.named(Event.DISPATCH_FAILED)
    world.tmux.unresponsive_targets.clear()
    world.cycle()
    world.cycle()

    assert [f["will_retry"] for f in failed] == [True]
    assert world.session(ref).received.count(world.session(ref).received[-1]) == 1
    assert len(world.session(ref).received) == 1
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    assert world.spawns() == 1 and world.kills() == 0
    assert world.record(ref).harness_session_id == "sid-1"


def test_ac3_first_spawn_against_a_live_occupant_kills_nothing_and_says_exists_live() -> None:
    world = World()
    ref = world.item()
    occupant = world.tmux.add_session(ref.target.name)

    world.cycle()

    failed = world.events.named(Event.SESSION_SPAWN_FAILED)
    assert failed and failed[0]["reason"].startswith("exists, live")
    assert f"tmux kill-session -t {ref.target.name}" in failed[0]["remedy"]
    assert f"sessions reset --work-item {ref}" in failed[0]["remedy"]
    assert world.tmux.sessions[ref.target.name] is occupant and not occupant.pane_dead
    assert world.spawns() == 0 and world.kills() == 0
    assert world.store.session(ref) is None


def test_ac4_a_dead_occupant_is_cleared_and_verified_before_the_spawn() -> None:
    world = World()
    ref = world.watched()
    world.tmux.exit_harness(ref.target.name)
    world.comment(ref)

    world.cycle()

    ops = [op for op, _ in world.tmux.calls]
    assert world.kills() == 0  # never kill-session: each dead pane is killed only while still dead
    assert "clear_dead" in ops and ops.index("clear_dead") < len(ops) - 1 - ops[::-1].index("spawn")
    assert world.tmux.session_state(ref.target) is SessionState.LIVE


def test_ac4_an_unverified_clear_reports_the_collision_and_never_calls_new_session() -> None:
    world = World()
    ref = world.watched()
    world.tmux.exit_harness(ref.target.name)
    world.tmux.kill_fails.add(ref.target.name)
    world.comment(ref)

    world.cycle()

    assert world.spawns() == 1  # the first-sight spawn only
    assert world.events.named(Event.DISPATCH_DROPPED)[0]["reason"] == "session-occupied"


def test_ac5_duplicate_session_with_a_live_occupant_is_resolved_once_into_a_window_of_the_harnesss_own() -> None:
    world = World()
    ref = world.watched()
    world.vanish(ref)
    world.tmux.occupy_on_next_spawn(ref.target.name, dead=False)
    comment = world.comment(ref)

    world.cycle()

    session = world.session(ref)
    occupant = session.panes[0]
    assert world.spawns() == 3  # first sight, the one refused with duplicate session, the harness's window
    assert occupant.received == [] and not occupant.dead  # a pane not proven the harness's: never typed into
    assert "New comment" in session.prompt and world.record(ref).pane_id == session.harness_id
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED


def test_ac5_duplicate_session_with_a_dead_occupant_clears_it_and_spawns_exactly_once_more() -> None:
    world = World()
    ref = world.watched()
    world.vanish(ref)
    world.tmux.occupy_on_next_spawn(ref.target.name, dead=True)
    comment = world.comment(ref)

    world.cycle()

    assert world.spawns() == 3  # first sight, refused, the one retry
    assert world.tmux.session_state(ref.target) is SessionState.LIVE
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED


def test_ac5_a_second_duplicate_session_is_not_retried_again() -> None:
    world = World()
    ref = world.watched()
    world.vanish(ref)
    world.tmux.occupy_on_next_spawn(ref.target.name, dead=True)
    original_clear = world.tmux.clear_dead

    def clear_then_reoccupy(target: TmuxTarget) -> None:
        original_clear(target)
        world.tmux.occupy_on_next_spawn(target.name, dead=True)

    world.tmux.clear_dead = clear_then_reoccupy  # type: ignore[method-assign]
    world.comment(ref)

    world.cycle()

    assert world.spawns() == 3  # first sight + at most two in this dispatch, never a loop
    assert world.events.named(Event.DISPATCH_FAILED)[0]["will_retry"] is True


def test_ac6_a_respawn_that_finds_the_session_live_delivers_into_it_instead() -> None:
    world = World(tmux=FirstProbeSaysDead())
    ref = world.watched()
    world.tmux.lie_once.add(ref.target.name)  # type: ignore[attr-defined]
    comment = world.comment(ref)

    world.cycle()

    assert world.spawns() == 1 and world.kills() == 0
    assert len(world.session(ref).received) == 1
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    averted = world.events.named(Event.SESSION_RESPAWN_AVERTED)
    assert averted and averted[0]["delivery_id"] == f"poll-comment-{comment.id}"


def test_ac7_a_spawn_on_the_respawn_path_that_meets_a_live_occupant_delivers_beside_it_never_into_it() -> None:
    world = World()
    ref = world.watched()
    world.vanish(ref)
    world.tmux.occupy_on_next_spawn(ref.target.name, dead=False)
    comment = world.comment(ref)

    world.cycle()

    occupant = world.session(ref).panes[0]
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    assert occupant.received == [] and not occupant.dead
    assert world.kills() == 0


def test_ac8_an_unclearable_dead_occupant_skips_the_comment_and_never_retries_it() -> None:
    world = World()
    ref = world.watched()
    world.tmux.exit_harness(ref.target.name)
    world.tmux.kill_fails.add(ref.target.name)
    comment = world.comment(ref)

    world.cycle()
    world.cycle()
    world.cycle()

    resolved = world.ledger(ref).resolved[comment.id]
    assert resolved.kind is Resolution.SKIPPED and resolved.reason == "skipped-session-occupied"
    assert len(world.events.named(Event.DISPATCH_DROPPED)) == 1
    assert len([q for q in world.events.named(Event.DISPATCH_QUEUED) if q.get("comment_id") == comment.id]) == 1
    assert len(world.tracker.posted) == 1


def test_ac9_any_other_respawn_failure_is_a_retried_dispatch_failure() -> None:
    world = World()
    ref = world.watched()
    world.vanish(ref)
    world.tmux.spawn = SpawnFails().spawn  # type: ignore[method-assign]
    comment = world.comment(ref)

    world.cycle()
    world.cycle()

    failed = world.events.named(Event.DISPATCH_FAILED)
    assert [f["will_retry"] for f in failed] == [True, True]
    assert world.ledger(ref).attempts(comment.id) == 2
    assert comment.id not in world.ledger(ref).resolved


def test_ac10_averted_respawns_and_occupied_skips_have_their_own_events() -> None:
    averting = World(tmux=FirstProbeSaysDead())
    ref = averting.watched()
    averting.tmux.lie_once.add(ref.target.name)  # type: ignore[attr-defined]
    averting.comment(ref)
    averting.cycle()
    skipping = World()
    other = skipping.watched()
    skipping.tmux.exit_harness(other.target.name)
    skipping.tmux.kill_fails.add(other.target.name)
    skipping.comment(other)
    skipping.cycle()

    distinct = {Event.SESSION_RESPAWNED, Event.SESSION_RESUME_FAILED, Event.DISPATCH_FAILED}
    assert Event.SESSION_RESPAWN_AVERTED in averting.events.names()
    assert not distinct & set(averting.events.names())
    assert skipping.events.named(Event.DISPATCH_DROPPED)[0]["reason"] == "session-occupied"
    assert not distinct & set(skipping.events.names())


def test_ac11_comments_abandoned_by_another_version_are_rearmed_once_with_a_fresh_budget() -> None:
    world = World(version="1.0.0", max_retries=2)
    ref = world.watched()
    world.tmux.unresponsive_targets.add(ref.target.name)
    comment = world.comment(ref)
    world.cycle()
    world.cycle()
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.ABANDONED
    world.restart(version="1.1.0")
    # still broken: the fresh budget is spent again, and this run never re-arms it a second time
    world.cycle()
    world.cycle()
    world.cycle()

    assert len(world.events.named(Event.POLL_REARMED)) == 1
    assert len([q for q in world.events.named(Event.DISPATCH_QUEUED) if q.get("comment_id") == comment.id]) == 4
    resolved = world.ledger(ref).resolved[comment.id]
    assert resolved.kind is Resolution.ABANDONED and resolved.version == "1.1.0"


def test_ac11_a_rearmed_comment_is_delivered_after_an_upgrade_fixed_the_cause() -> None:
    world = World(version="1.0.0", max_retries=1)
    ref = world.watched()
    world.tmux.unresponsive_targets.add(ref.target.name)
    comment = world.comment(ref)
    world.cycle()
    world.tmux.unresponsive_targets.clear()
    world.restart(version="1.1.0")

    world.cycle()

    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    assert len(world.session(ref).received) == 1


def test_ac11_the_same_version_never_rearms_so_cron_cannot_loop() -> None:
    world = World(version="1.0.0", max_retries=1)
    ref = world.watched()
    world.tmux.unresponsive_targets.add(ref.target.name)
    comment = world.comment(ref)
    world.cycle()
    for _ in range(3):  # `poll --once` from cron: a new process each time, same version
        world.restart(version="1.0.0")
        world.cycle()

    assert world.events.named(Event.POLL_REARMED) == []
    assert len([q for q in world.events.named(Event.DISPATCH_QUEUED) if q.get("comment_id") == comment.id]) == 1


def test_ac12_a_killed_session_is_respawned_with_resume_and_keeps_its_conversation_id() -> None:
    world = World()
    ref = world.watched()
    world.vanish(ref)
    world.comment(ref)

    world.cycle()

    session = world.session(ref)
    assert session.argv == ("claude", "--resume", "sid-1")
    assert "New comment" in session.prompt  # the pending event went in on the argv
    assert world.record(ref).harness_session_id == "sid-1"
    assert world.events.named(Event.SESSION_RESPAWNED)[0]["resumed"] is True
    assert world.events.named(Event.SESSION_RESUME_FAILED) == []  # judged by the harness's ready receipt


def test_ac12_an_unknown_conversation_id_falls_back_to_a_fresh_conversation() -> None:
    world = World()
    ref = world.watched()
    world.vanish(ref)
    world.tmux.exit_on_spawn = resume_fails_unless_known(known_ids=())
    world.comment(ref)

    world.cycle()

    session = world.session(ref)
    assert session.argv == ("claude", "--session-id", "sid-2")
    assert world.record(ref).harness_session_id == "sid-2"
    assert world.events.named(Event.SESSION_RESUME_FAILED)[0]["old_session_id"] == "sid-1"
    assert not session.pane_dead


def test_ac12_a_harness_without_resume_gets_a_fresh_conversation_with_resume_failed() -> None:
    world = World(harness="cursor")
    ref = world.watched()
    world.vanish(ref)
    world.comment(ref)

    world.cycle()

    assert world.session(ref).argv == ("cursor-agent",)
    assert world.record(ref).harness_session_id == "sid-2"
    assert world.events.named(Event.SESSION_RESUME_FAILED)[0]["reason"] == "harness has no resume"
