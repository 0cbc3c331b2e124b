"""`the-loop costs` and `the-loop budget`: what the turns cost and where the budgets stand, read
from the store alone, and a budget raised and reset by the operator on every host's store."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from domain.ledger import Ledger, Pending
from domain.model import Comment
from domain.refs import WorkItemRef
from domain.spending import TurnCost
from domain.usage import TurnUsage
from tests.e2e.loop_rig import Loop, loop
from tests.tmux_support import real_tmux

__all__ = ["loop", "real_tmux"]

DAY = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)  # a day long past: the turns of two days, whenever this runs
FIRST = WorkItemRef.parse("github:sandbox/demo#1")
SECOND = WorkItemRef.parse("github:sandbox/demo#2")
USAGE = TurnUsage(input=1000, output=200, cache_write=0, cache_read=3000, model="claude-sonnet-4-5")


def kept(loop: Loop) -> None:
    """Three turns: two on the first item (alice's, then bob's a day later), then one of unknown usage."""
    store = loop.store()
    base = TurnCost(FIRST, "c1", DAY, "claude", "alice", frozenset({"loop", "bug"}), USAGE, 6900)
    store.record_cost(base)
    store.record_cost(replace(base, comment_id="c2", author="bob", ended_at=DAY + timedelta(days=1)))
    store.record_cost(
        replace(
            base,
            item=SECOND,
            comment_id="c3",
            usage=None,
            micro_dollars=None,
            ended_at=DAY + timedelta(days=1, hours=1),
        )
    )
    store.close()  # type: ignore[attr-defined]


def as_json(loop: Loop, *args: str) -> dict[str, Any]:
    result = loop.cli(*args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_costs_are_summed_by_item_author_or_label_from_the_store(loop: Loop) -> None:
    kept(loop)

    by_item = as_json(loop, "costs")
    by_author = as_json(loop, "costs", "--by", "author")
    by_label = as_json(loop, "costs", "--by", "label", "--since", "2026-01-02")

    assert [(r["key"], r["turns"], r["usd_estimated"], r["tokens"]) for r in by_item["rows"]] == [
        (str(FIRST), 2, 0.0138, 8400),
        (str(SECOND), 1, 0.0, 0),
    ]
    assert by_item["rows"][1]["usage_unknown"] == 1 and by_item["estimated"] is True
    assert by_item["total"]["usd_estimated"] == 0.0138 and by_item["total"]["turns"] == 3
    assert {r["key"]: r["turns"] for r in by_author["rows"]} == {"alice": 2, "bob": 1}
    assert {r["key"]: r["turns"] for r in by_label["rows"]} == {"bug": 2, "loop": 2}  # c2 and c3, each label


def test_costs_as_a_table_say_the_money_is_estimated_and_what_is_unknown(loop: Loop) -> None:
    kept(loop)

    by_day = loop.cli("costs", "--by", "day")
    by_item = loop.cli("costs")

    assert by_day.returncode == 0, by_day.stderr
    assert "$0.0069 est.\n" in by_day.stdout and "$0.0069 est. (+1 unknown)\n" in by_day.stdout
    assert [line.split()[-1] for line in by_item.stdout.splitlines()[1:3]] == ["est.", "unknown"]
    assert "money is estimated at the price table of" in by_day.stdout


def test_a_bad_since_is_a_usage_error_naming_what_is_accepted(loop: Loop) -> None:
    shown = loop.cli("costs", "--since", "last tuesday")

    assert shown.returncode == 2
    assert "give a date (2026-12-01) or an age (7d, 12h)" in shown.stderr


def test_a_budget_spent_is_listed_raised_for_every_host_and_reset(loop: Loop) -> None:
    loop.extra = {"budgets": [{"scope": "item", "usd": 0.01}, {"scope": "day", "tokens": 1_000_000}]}
    kept(loop)

    spent = as_json(loop, "budget", "list")["standings"]
    raised = loop.cli("budget", "raise", "item", "--usd", "0.05")
    after = as_json(loop, "budget", "list")["standings"]
    reset = loop.cli("budget", "reset", "item")
    again = as_json(loop, "budget", "list")["standings"]

    first = [s for s in spent if s["subject"] == "sandbox/demo#1"]
    assert [(s["budget"], s["reached"], s["raised"]) for s in first] == [("item", True, False)]
    assert raised.returncode == 0, raised.stderr
    assert [(s["reached"], s["raised"], s["allowed_usd"]) for s in after if s["subject"] == "sandbox/demo#1"] == [
        (False, True, 0.05)
    ]
    assert reset.returncode == 0, reset.stderr
    assert [s["reached"] for s in again if s["subject"] == "sandbox/demo#1"] == [True]


def test_raising_a_budget_that_is_not_configured_names_the_configured_ones(loop: Loop) -> None:
    loop.extra = {"budgets": [{"scope": "day", "usd": 5}]}

    shown = loop.cli("budget", "raise", "month", "--usd", "9")
    bad = loop.cli("budget", "raise", "day", "--usd", "lots")

    assert (shown.returncode, shown.stderr.strip()) == (
        2,
        "the-loop: budget: no budget 'month'; the configured ones: day",
    )
    assert bad.returncode == 2 and "is not an amount of dollars" in bad.stderr


def test_why_names_the_spent_budget_that_holds_a_waiting_comment(loop: Loop) -> None:
    loop.extra = {"budgets": [{"scope": "item", "usd": 0.01}]}
    kept(loop)
    store = loop.store()
    waiting = Comment("9009", FIRST, "alice", "please go on", DAY + timedelta(days=2))
    store.save_ledger(Ledger(FIRST, baseline_at=DAY, pending=(Pending(waiting),)))
    store.close()  # type: ignore[attr-defined]

    told = loop.cli("why", "9009")

    assert told.returncode == 0, told.stderr
    assert "held by the budget `item`: spent (sandbox/demo#1); see `the-loop budget list`" in told.stdout
    assert "please go on" not in told.stdout


def test_listing_the_budgets_where_no_store_is_yet_makes_none(loop: Loop) -> None:
    loop.extra = {"budgets": [{"scope": "day", "usd": 5}]}

    listed = as_json(loop, "budget", "list")

    assert (listed["budgets"], listed["standings"]) == (["day"], [])
    assert not (loop.state / "state.sqlite3").exists()  # a read writes nothing
