"""The session policy as pure decisions (`domain/policy.py`), over what tmux says of the session and of the
harness's own (marked) pane."""

from __future__ import annotations

import pytest

from domain.model import ItemKind, Probe, SessionState, SpawnMode, WorkItem
from domain.policy import (
    Clear,
    Ready,
    Step,
    clear_decision,
    cleared,
    on_delivery_probe,
    on_respawn_probe,
    readiness,
    spawn_armed,
)
from domain.receipts import HarnessState
from domain.refs import WorkItemRef

S = SessionState


def harness(state: SessionState) -> Probe:
    return Probe(S.LIVE if state is S.LIVE else state, state, "%1" if state in {S.LIVE, S.DEAD} else "")


@pytest.mark.parametrize(
    ("state", "step"),
    [(S.LIVE, Step.PASTE), (S.UNKNOWN, Step.PASTE), (S.DEAD, Step.RESPAWN_PATH), (S.ABSENT, Step.RESPAWN_PATH)],
)
def test_delivery_probe_pastes_unless_tmux_answered_the_harness_pane_dead_or_absent(
    state: SessionState, step: Step
) -> None:
    assert on_delivery_probe(harness(state)).choice is step


def test_a_live_session_whose_harness_pane_is_dead_takes_the_respawn_path() -> None:
    # an operator's live window does not make a dead harness live
    probe = Probe(S.LIVE, S.DEAD, "%1", others_live=True)
    assert on_delivery_probe(probe).choice is Step.RESPAWN_PATH


def test_the_respawn_probe_delivers_into_the_harness_only_when_its_own_pane_runs() -> None:
    assert on_respawn_probe(harness(S.LIVE)).choice is Step.DELIVER_INTO_HARNESS
    assert {on_respawn_probe(harness(s)).choice for s in (S.DEAD, S.ABSENT, S.UNKNOWN)} == {Step.CLEAR}
    stranger = Probe(S.LIVE, S.ABSENT, others_live=True)
    assert on_respawn_probe(stranger).choice is Step.CLEAR


@pytest.mark.parametrize(
    ("session", "first", "proved", "clear"),
    [
        (S.ABSENT, False, False, Clear.GO),
        (S.UNKNOWN, False, False, Clear.GO),
        (S.UNKNOWN, False, True, Clear.REFUSE_LIVE),
        (S.DEAD, False, False, Clear.KILL_DEAD),
        (S.DEAD, True, True, Clear.KILL_DEAD),
        (S.LIVE, True, False, Clear.REFUSE_LIVE),
        (S.LIVE, True, True, Clear.REFUSE_LIVE),
        (S.LIVE, False, False, Clear.WINDOW),
        (S.LIVE, False, True, Clear.WINDOW),
    ],
)
def test_clearing_a_name(session: SessionState, first: bool, proved: bool, clear: Clear) -> None:
    decision = clear_decision(Probe(session, S.ABSENT), first=first, tmux_proved_taken=proved)
    assert decision.choice is clear and decision.reason


def test_a_clear_is_proved_by_a_fresh_probe_only() -> None:
    assert cleared(Probe(S.ABSENT, S.ABSENT)).choice
    assert cleared(Probe(S.LIVE, S.ABSENT, others_live=True)).choice  # someone's window remains: spawn beside it
    assert not cleared(Probe(S.DEAD, S.ABSENT)).choice
    assert not cleared(Probe.unknown()).choice


@pytest.mark.parametrize(
    ("state", "ready"),
    [
        (HarnessState.READY, Ready.GO),
        (HarnessState.BUSY, Ready.GO),  # a busy Claude Code queues a paste
        (HarnessState.IDLE, Ready.GO),
        (HarnessState.STARTING, Ready.WAIT),
        (HarnessState.UNKNOWN, Ready.WAIT),
        (HarnessState.BLOCKED, Ready.BLOCKED),
        (HarnessState.ENDED, Ready.GONE),
        (HarnessState.DEAD, Ready.GONE),
    ],
)
def test_a_paste_goes_only_into_a_harness_that_said_it_is_ready_and_is_not_blocked(
    state: HarnessState, ready: Ready
) -> None:
    assert readiness(state).choice is ready


@pytest.mark.parametrize(
    ("state", "ready"),
    [
        (HarnessState.BUSY, Ready.LATER),  # a paste would join the running turn, unconfirmed
        (HarnessState.READY, Ready.GO),
        (HarnessState.IDLE, Ready.GO),
        (HarnessState.BLOCKED, Ready.BLOCKED),
    ],
)
def test_a_harness_that_joins_typed_prompts_to_its_turn_is_pasted_into_only_when_ready_or_idle(
    state: HarnessState, ready: Ready
) -> None:
    assert readiness(state, paste_while_busy=False).choice is ready


def test_spawn_arming_follows_spawn_on_unmatched() -> None:
    item = WorkItem(WorkItemRef.parse("github:a/b#1"), "t", "alice", frozenset({"loop"}), ItemKind.ISSUE)
    assert spawn_armed(item, mode=SpawnMode.ALWAYS, label="other").choice
    assert spawn_armed(item, mode=SpawnMode.LABELED, label="loop").choice
    assert not spawn_armed(item, mode=SpawnMode.LABELED, label="other").choice
    assert not spawn_armed(item, mode=SpawnMode.NEVER, label="loop").choice
