"""The session policy as pure decisions (DESIGN §4)."""

from __future__ import annotations

import pytest

from domain.model import ItemKind, SessionState, SpawnMode, WorkItem
from domain.policy import (
    Clear,
    Step,
    clear_decision,
    clear_verified,
    on_delivery_probe,
    on_respawn_probe,
    resume_survived,
    spawn_armed,
)
from domain.refs import WorkItemRef

S = SessionState


@pytest.mark.parametrize(
    ("state", "step"),
    [(S.LIVE, Step.PASTE), (S.UNKNOWN, Step.PASTE), (S.DEAD, Step.RESPAWN_PATH), (S.ABSENT, Step.RESPAWN_PATH)],
)
def test_delivery_probe_pastes_unless_tmux_answered_dead_or_absent(state: SessionState, step: Step) -> None:
    assert on_delivery_probe(state).choice is step


def test_the_respawn_probe_routes_into_a_live_session() -> None:
    assert on_respawn_probe(S.LIVE).choice is Step.DELIVER_INTO_OCCUPANT
    assert {on_respawn_probe(s).choice for s in (S.DEAD, S.ABSENT, S.UNKNOWN)} == {Step.CLEAR}


@pytest.mark.parametrize(
    ("state", "proved", "clear"),
    [
        (S.ABSENT, False, Clear.GO),
        (S.UNKNOWN, False, Clear.GO),
        (S.LIVE, False, Clear.REFUSE_LIVE),
        (S.DEAD, False, Clear.KILL_THEN_VERIFY),
        (S.UNKNOWN, True, Clear.REFUSE_LIVE),
        (S.ABSENT, True, Clear.GO),
        (S.DEAD, True, Clear.KILL_THEN_VERIFY),
        (S.LIVE, True, Clear.REFUSE_LIVE),
    ],
)
def test_clearing_a_name(state: SessionState, proved: bool, clear: Clear) -> None:
    decision = clear_decision(state, tmux_proved_taken=proved)
    assert decision.choice is clear and decision.reason


def test_a_clear_is_verified_by_the_kill_or_by_a_fresh_absent_probe_only() -> None:
    assert clear_verified(kill_succeeded=True, state_after=S.ABSENT).choice
    assert clear_verified(kill_succeeded=False, state_after=S.ABSENT).choice
    assert not clear_verified(kill_succeeded=False, state_after=S.DEAD).choice
    assert not clear_verified(kill_succeeded=False, state_after=S.UNKNOWN).choice


def test_a_resumed_session_survives_when_live_or_unanswered() -> None:
    assert resume_survived(S.LIVE).choice and resume_survived(S.UNKNOWN).choice
    assert not resume_survived(S.DEAD).choice and not resume_survived(S.ABSENT).choice


def test_spawn_arming_follows_spawn_on_unmatched() -> None:
    item = WorkItem(WorkItemRef.parse("github:a/b#1"), "t", "alice", frozenset({"loop"}), ItemKind.ISSUE)
    assert spawn_armed(item, mode=SpawnMode.ALWAYS, label="other").choice
    assert spawn_armed(item, mode=SpawnMode.LABELED, label="loop").choice
    assert not spawn_armed(item, mode=SpawnMode.LABELED, label="other").choice
    assert not spawn_armed(item, mode=SpawnMode.NEVER, label="loop").choice
