"""`status` from the lock holder and the heartbeat: running, last cycle, overdue, exit status."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from app.usecases.views.poller_status import Exit, describe, is_overdue, poller_status

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
STARTED = (NOW - timedelta(hours=1)).isoformat()


def _beat(*, ago: float, started: str = STARTED, interval: float = 60, monotonic: float | None = None) -> str:
    finished = NOW - timedelta(seconds=ago)
    beat = {
        "pid": 42,
        "started": started,
        "interval_seconds": interval,
        "last_cycle_started": (finished - timedelta(seconds=2)).isoformat(),
        "last_cycle_finished": finished.isoformat(),
        "summary": {"items": 3, "delivered": 1},
    }
    return json.dumps(beat | ({} if monotonic is None else {"last_cycle_finished_monotonic": monotonic}))


def test_a_poller_with_a_recent_cycle_is_running_and_on_time() -> None:
    status = poller_status(
        holder={"pid": 42, "started": STARTED}, heartbeat_text=_beat(ago=61), now=NOW, interval_seconds=60
    )

    assert (status.running, status.overdue, status.exit) == (True, False, Exit.RUNNING)


def test_a_poller_silent_past_twice_its_interval_and_the_slack_is_overdue() -> None:
    status = poller_status(
        holder={"pid": 42, "started": STARTED}, heartbeat_text=_beat(ago=151), now=NOW, interval_seconds=60
    )

    assert (status.overdue, status.exit) == (True, Exit.OVERDUE)
    assert describe(status)[-1].startswith("OVERDUE: cycles every 60s; overdue after 150s")


@pytest.mark.parametrize(
    ("wall_ago", "monotonic_ago", "overdue"),
    [(61, 200, True), (3600, 30, False)],
    ids=["clock set back an hour", "clock set forward an hour"],
)
def test_faults_overdue_is_judged_on_the_machines_monotonic_clock_not_its_wall_clock(
    wall_ago: float, monotonic_ago: float, overdue: bool
) -> None:
    # CLOCK_MONOTONIC is one clock for every process of a machine: the daemon writes its reading,
    # `status` compares its own; a wall clock stepped by an hour misleads neither way
    status = poller_status(
        holder={"pid": 42, "started": STARTED, "started_monotonic": 100.0},
        heartbeat_text=_beat(ago=wall_ago, monotonic=5000.0 - monotonic_ago),
        now=NOW,
        interval_seconds=60,
        monotonic=5000.0,
    )

    assert (status.overdue, round(status.quiet_for or 0)) == (overdue, monotonic_ago)


def test_faults_a_poller_with_no_cycle_yet_is_judged_from_its_start_on_the_monotonic_clock() -> None:
    status = poller_status(
        holder={"pid": 42, "started": (NOW + timedelta(hours=1)).isoformat(), "started_monotonic": 4000.0},
        heartbeat_text=None,
        now=NOW,
        interval_seconds=60,
        monotonic=5000.0,
    )

    assert (status.overdue, status.quiet_for) == (True, 1000.0)


def test_the_running_pollers_own_interval_wins_over_this_configuration() -> None:
    status = poller_status(
        holder={"pid": 42, "started": STARTED},
        heartbeat_text=_beat(ago=151, interval=600),
        now=NOW,
        interval_seconds=60,
    )

    assert (status.interval_seconds, status.overdue) == (600, False)


def test_an_earlier_pollers_heartbeat_says_nothing_about_the_running_one() -> None:
    recently = (NOW - timedelta(seconds=10)).isoformat()
    status = poller_status(
        holder={"pid": 43, "started": recently}, heartbeat_text=_beat(ago=3600), now=NOW, interval_seconds=60
    )

    assert (status.quiet_for, status.overdue) == (10, False)


def test_no_poller_is_not_running_and_shows_the_last_cycle() -> None:
    status = poller_status(holder=None, heartbeat_text=_beat(ago=7200), now=NOW, interval_seconds=60)

    lines = describe(status)
    assert (status.exit, status.overdue) == (Exit.NOT_RUNNING, False)
    assert lines == [
        "not running",
        "last cycle: 2026-11-30 07:00:00 UTC (2h ago, pid 42), took 2.0s: items=3 delivered=1",
    ]


def test_an_unreadable_heartbeat_is_no_cycle_known() -> None:
    status = poller_status(holder=None, heartbeat_text="{not json", now=NOW, interval_seconds=60)

    assert status.heartbeat is None and status.as_json()["last_cycle"] is None


def test_faults_a_poller_whose_cycles_fail_is_failing_with_its_cause() -> None:
    """Fault: the daemon notes its failing cycles in the lock, which `status` can read
    when the state store cannot be written (or read)."""
    failing = {"since": STARTED, "cycles": 3, "cause": "StateError: state store x: database or disk is full"}
    status = poller_status(
        holder={"pid": 42, "started": STARTED, "failing": failing}, heartbeat_text=None, now=NOW, interval_seconds=60
    )

    assert (status.running, status.exit) == (True, Exit.FAILING)
    assert status.as_json()["failing"] == failing
    assert describe(status)[-1].startswith("FAILING: 3 cycles in a row since 2026-11-30 08:00:00")
    assert describe(status)[-1].endswith("database or disk is full")


def test_overdue_is_one_rule_quiet_past_two_intervals_and_the_slack() -> None:
    # the status and the fleet page both ask it: 2 x 60 s + 30 s of slack
    assert [is_overdue(quiet, 60) for quiet in (None, 0.0, 150.0, 150.5)] == [False, False, False, True]


RESET = datetime(2026, 11, 30, 9, 30, tzinfo=UTC).timestamp()


def _numbers(remaining: int) -> dict[str, float]:
    return {"remaining": remaining, "limit": 5000, "reset": RESET}


def test_status_says_the_token_s_budget_and_keeps_it_by_host_in_its_json() -> None:
    beat = json.loads(_beat(ago=5)) | {"budgets": {"github.com": _numbers(4873)}}
    status = poller_status(
        holder={"pid": 42, "started": STARTED}, heartbeat_text=json.dumps(beat), now=NOW, interval_seconds=60
    )

    assert "GitHub budget: 4,873 of 5,000 left, resets 09:30 UTC" in describe(status)
    assert status.as_json()["budgets"] == {"github.com": _numbers(4873)}
    assert status.as_json()["installation_budgets"] == []


def test_status_says_each_installation_s_budget_on_a_line_of_its_own_with_its_owner() -> None:
    installations = [
        {"host": "github.com", "installation": 7, "owners": ["acme"]} | _numbers(40),
        {"host": "github.com", "installation": 9, "owners": ["globex"]} | _numbers(4200),
    ]
    beat = json.loads(_beat(ago=5)) | {"budgets": {}, "installation_budgets": installations}
    status = poller_status(
        holder={"pid": 42, "started": STARTED}, heartbeat_text=json.dumps(beat), now=NOW, interval_seconds=60
    )

    assert [line for line in describe(status) if line.startswith("GitHub budget")] == [
        "GitHub budget: installation 7 (acme): 40 of 5,000 left, resets 09:30 UTC",
        "GitHub budget: installation 9 (globex): 4,200 of 5,000 left, resets 09:30 UTC",
    ]
    assert status.as_json()["installation_budgets"] == installations and status.as_json()["budgets"] == {}
