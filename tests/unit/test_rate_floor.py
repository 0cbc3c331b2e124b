"""When the cycle reads a repository with the budget its requests count against: reads stop at the
floor kept for notices and replies, until the reset; each App installation's budget holds its own."""

from __future__ import annotations

from domain.budget import RateBudget, Spend, read_decision

NOW = 1_800_000_000.0
RESET = NOW + 1800


def test_a_budget_above_the_floor_is_read() -> None:
    decision = read_decision(RateBudget(101, 5000, RESET), floor=100, now_epoch=NOW)
    assert decision.choice is Spend.READ and decision.until_epoch is None


def test_a_budget_at_the_floor_holds_reads_until_its_reset() -> None:
    decision = read_decision(RateBudget(100, 5000, RESET), floor=100, now_epoch=NOW)
    assert (decision.choice, decision.until_epoch) == (Spend.HOLD, RESET)
    assert "100 of 5000 requests left" in decision.reason and "floor of 100" in decision.reason


def test_a_budget_below_the_floor_holds_reads_until_its_reset() -> None:
    assert read_decision(RateBudget(3, 5000, RESET), floor=100, now_epoch=NOW).choice is Spend.HOLD


def test_a_budget_past_its_reset_is_read_again_whatever_it_last_said() -> None:
    assert read_decision(RateBudget(0, 5000, RESET), floor=100, now_epoch=RESET).choice is Spend.READ


def test_a_budget_not_stated_yet_is_read() -> None:
    assert read_decision(None, floor=100, now_epoch=NOW).choice is Spend.READ


def test_a_floor_of_zero_holds_only_a_spent_budget_as_before() -> None:
    assert read_decision(RateBudget(1, 5000, RESET), floor=0, now_epoch=NOW).choice is Spend.READ
    assert read_decision(RateBudget(0, 5000, RESET), floor=0, now_epoch=NOW).choice is Spend.HOLD


def test_each_installation_s_budget_decides_for_its_own_repositories_only() -> None:
    spent = RateBudget(40, 5000, RESET, installation=7)
    plenty = RateBudget(4800, 5000, RESET + 600, installation=9)

    held, read = (read_decision(b, floor=100, now_epoch=NOW) for b in (spent, plenty))

    assert (held.choice, held.until_epoch) == (Spend.HOLD, RESET) and "installation 7" in held.reason
    assert read.choice is Spend.READ
