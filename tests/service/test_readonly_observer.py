"""readonly-observer-bugfix.md R1–R3 at the service level: observers, give-up notices, unchanged delivery."""

from __future__ import annotations

from dataclasses import replace

from domain.errors import TmuxFailed
from domain.events import Event
from domain.ledger import Ledger, Resolution
from domain.model import AGENT_MARKER
from domain.refs import TmuxTarget
from tests.fakes.tmux import FakeTmux
from tests.service.world import World

SECRET = "rm -rf / # exfiltrate ghp_secret_token"


class PasteFails(FakeTmux):
    def deliver(
        self, target: TmuxTarget, prompt: str, *, delivery_id: str, pane: str, mark: str, submit_delay_ms: int = 0
    ) -> None:
        self.calls.append(("deliver", target.name))
        raise TmuxFailed("paste-buffer", 1, "no space left")


def _unspawned(ledger: Ledger) -> Ledger:
    """The ledger but for its open turns' spawn ids (random in each world)."""
    return replace(ledger, turns=tuple(replace(turn, spawn="") for turn in ledger.turns))


def _abandon(world: World) -> tuple[object, str]:
    ref = world.watched()
    world.tmux.unresponsive_targets.add(ref.target.name)
    comment = world.comment(ref, SECRET)
    for _ in range(world.max_retries):
        world.cycle()
    return ref, comment.id


def test_r1_a_read_only_observer_does_not_block_delivery() -> None:
    world = World()
    ref = world.watched()
    world.tmux.attach(ref.target, read_only=True)
    comment = world.comment(ref)

    world.cycle()

    assert world.session(ref).submits == 1
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED


def test_r2_an_abandoned_comment_gets_exactly_one_notice_with_marker_attempts_and_recovery() -> None:
    world = World(max_retries=3)
    ref, comment_id = _abandon(world)
    world.cycle()
    world.cycle()

    assert len(world.tracker.posted) == 1
    posted_ref, body = world.tracker.posted[0]
    assert posted_ref == ref
    assert body.startswith(AGENT_MARKER)
    assert "the-loop" in body.splitlines()[1]  # the visible attribution line
    assert f"comment {comment_id}" in body and "Attempts: 3" in body
    assert "will not be retried" in body
    assert "post the instruction again as a new comment" in body
    assert len(world.events.named(Event.POLL_GIVEUP_REPORTED)) == 1


def test_r2_the_notice_never_echoes_the_abandoned_comments_text() -> None:
    world = World()
    _abandon(world)

    body = world.tracker.posted[0][1]
    assert "rm -rf" not in body and "ghp_secret_token" not in body and "exfiltrate" not in body


def test_r2_the_notice_is_not_read_back_as_a_human_comment() -> None:
    world = World(authorized=("alice", "the-loop"))
    ref, _ = _abandon(world)
    world.tmux.unresponsive_targets.clear()

    world.cycle()
    world.cycle()

    assert world.session(ref).received == []


def test_r2_a_failed_notice_post_leaves_the_ledger_exactly_as_a_successful_one() -> None:
    posting, failing = World(), World()
    failing.tracker.fail_posts = True
    ref, comment_id = _abandon(posting)
    _abandon(failing)

    assert _unspawned(failing.ledger(ref)) == _unspawned(posting.ledger(ref))
    assert failing.ledger(ref).resolved[comment_id].kind is Resolution.ABANDONED
    assert len(failing.events.named(Event.POLL_GIVEUP_REPORT_FAILED)) == 1
    assert failing.events.named(Event.POLL_CYCLE)[-1]["abandoned"] == 1  # the cycle carried on


def test_r2_the_abandonment_records_the_running_version() -> None:
    world = World(version="2.3.4")
    ref, comment_id = _abandon(world)

    resolved = world.ledger(ref).resolved[comment_id]
    assert resolved.version == "2.3.4" and resolved.attempts == 3
    assert world.events.named(Event.POLL_COMMENT_FAILED)[0]["will_retry"] is False


def test_r3_an_absent_session_still_takes_the_respawn_path() -> None:
    world = World()
    ref = world.watched()
    world.vanish(ref)
    world.comment(ref)

    world.cycle()

    assert world.events.named(Event.SESSION_RESPAWNED)


def test_r3_a_non_terminal_paste_failure_is_retried_without_a_respawn() -> None:
    world = World(tmux=PasteFails())
    ref = world.watched()
    world.comment(ref)

    world.cycle()

    assert world.events.named(Event.DISPATCH_FAILED)[0]["will_retry"] is True
    assert not {Event.SESSION_RESPAWNED, Event.SESSION_RESPAWN_AVERTED} & set(world.events.names())
    assert world.spawns() == 1
    assert sum(1 for op, _ in world.tmux.calls if op == "deliver") == 1  # one attempt, no respawn path


def test_r3_no_paste_buffer_is_left_behind_on_success_or_failure() -> None:
    world = World()
    ref = world.watched()
    world.comment(ref)
    world.cycle()
    world.tmux.exit_harness(ref.target.name)
    world.tmux.kill_fails.add(ref.target.name)
    world.comment(ref)
    world.cycle()

    assert world.tmux.buffers == {}
