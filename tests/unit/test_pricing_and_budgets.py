"""A turn's money from its model's prices, and where a budget's periods begin and what it covers."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from app.config.spending import PINNED_PRICES, PRICES_DATED, PricingSettings
from domain.pricing import Price, PriceTable, dollars
from domain.refs import WorkItemRef
from domain.spending import Budget, Scope, Spent
from domain.usage import TurnUsage

SONNET = Price(Decimal(3), Decimal(15), Decimal("3.75"), Decimal("0.30"))
ITEM = WorkItemRef.parse("github:acme/widgets#7")


def usage(model: str, *, input: int = 1_000_000, output: int = 0, write: int = 0, read: int = 0) -> TurnUsage:
    return TurnUsage(input=input, output=output, cache_write=write, cache_read=read, model=model)


def test_a_turn_costs_each_count_at_its_price_rounded_once_to_the_micro_dollar() -> None:
    table = PriceTable.of({"claude-sonnet-4*": SONNET}, dated="d")

    # 1,234 x 3 + 567 x 15 + 89 x 3.75 + 10,000 x 0.30 = 3,702 + 8,505 + 333.75 + 3,000 = 15,540.75
    assert table.cost(usage("claude-sonnet-4-5", input=1234, output=567, write=89, read=10_000)) == 15541
    assert table.cost(usage("CLAUDE-SONNET-4-5-20250929")) == 3_000_000  # any case: $3 a million


def test_an_unknown_model_or_several_models_of_different_prices_are_tokens_only() -> None:
    table = PriceTable.of({"claude-sonnet-4*": SONNET, "claude-haiku*": SONNET}, dated="d")

    assert table.cost(usage("standin-model")) is None
    assert table.cost(usage("")) is None
    assert table.cost(usage("claude-sonnet-4-5, claude-haiku-4-5")) == 3_000_000  # one price: known
    other = PriceTable.of({"claude-sonnet-4*": SONNET, "claude-haiku*": Price(*(Decimal(1),) * 4)}, dated="d")
    assert other.cost(usage("claude-sonnet-4-5, claude-haiku-4-5")) is None


def test_the_operators_prices_come_before_the_pinned_table() -> None:
    own = PricingSettings.model_validate({"models": {"claude-sonnet-4*": {"input": 0.3, "output": 1}}}).table()

    assert own.cost(usage("claude-sonnet-4-5")) == 300_000
    assert own.cost(usage("claude-opus-4-1")) == 15_000_000  # the pinned table's, dated
    assert own.dated == PRICES_DATED and "gpt-5*" in PINNED_PRICES


def test_money_reads_in_cents_from_a_dollar_on_and_in_four_places_below() -> None:
    assert [dollars(m) for m in (0, 1234, 15541, 999_999, 1_000_000, 12_345_678)] == [
        "$0.0000", "$0.0012", "$0.0155", "$1.0000", "$1.00", "$12.35",
    ]  # fmt: skip


def test_a_days_and_a_months_budget_start_at_midnight_utc_and_the_others_never_start_again() -> None:
    late = datetime(2026, 12, 31, 23, 59, tzinfo=UTC)

    assert Budget(Scope.DAY, tokens=1).period(late) == (datetime(2026, 12, 31, tzinfo=UTC), "2026-12-31")
    assert Budget(Scope.DAY, tokens=1).next_period(late) == datetime(2027, 1, 1, tzinfo=UTC)
    assert Budget(Scope.MONTH, tokens=1).next_period(late) == datetime(2027, 1, 1, tzinfo=UTC)
    assert Budget(Scope.MONTH, tokens=1).next_period(datetime(2026, 3, 5, tzinfo=UTC)) == datetime(
        2026, 4, 1, tzinfo=UTC
    )
    assert (
        Budget(Scope.ITEM, tokens=1).period(late) == (None, "")
        and Budget(Scope.ITEM, tokens=1).next_period(late) is None
    )


def test_a_budget_covers_what_its_match_names_each_on_its_own_and_a_day_all_together() -> None:
    labels = frozenset({"loop", "bug"})

    assert [s.name for s in Budget(Scope.LABEL, tokens=1).subjects(ITEM, labels, "alice")] == ["bug", "loop"]
    assert [s.name for s in Budget(Scope.LABEL, match="B*", tokens=1).subjects(ITEM, labels, "alice")] == ["bug"]
    assert [s.name for s in Budget(Scope.ITEM, match="acme/*#7", tokens=1).subjects(ITEM, labels, "")] == [
        "acme/widgets#7"
    ]
    assert Budget(Scope.AUTHOR, tokens=1).subjects(ITEM, labels, "") == ()  # a start's prompt has no author
    assert Budget(Scope.REPOSITORY, match="other/*", tokens=1).subjects(ITEM, labels, "alice") == ()
    assert [s.name for s in Budget(Scope.DAY, match="acme/*", tokens=1).subjects(ITEM, labels, "")] == ["acme/*"]


def test_a_budgets_share_is_the_larger_of_money_and_tokens() -> None:
    both = Budget(Scope.DAY, micro_dollars=1000, tokens=100)

    assert both.share(Spent(micro_dollars=500, tokens=90)) == 0.9
    assert both.share(Spent(micro_dollars=1500, tokens=10)) == 1.5
    assert Budget(Scope.DAY, tokens=0).share(Spent()) == float("inf")  # nothing allowed: spent at once
