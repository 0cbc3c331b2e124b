"""`pricing` and `budgets`: what a model's tokens cost, and the allowances that hold an item's
comments once spent (docs/costs.md). The pinned price table is the-loop's own; the operator's
`pricing.models` entries are matched before it."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from app.config.sections import Section
from domain.pricing import MICRO, Price, PriceTable
from domain.spending import Budget, Scope

# USD per million tokens: input, output, cache write (5-minute), cache read. Read off the providers'
# price pages on this date; the longer-context tiers (Gemini above 200k, Sonnet's 1M) are not modelled.
# A model not matched here is "tokens only" unless `pricing.models` names it.
PRICES_DATED = "2025-11-20"
PINNED_PRICES: dict[str, Price] = {
    pattern: Price(*(Decimal(v) for v in values))
    for pattern, values in {
        "claude-opus-4-5*": ("5", "25", "6.25", "0.50"),
        "claude-opus-4*": ("15", "75", "18.75", "1.50"),
        "claude-sonnet-4*": ("3", "15", "3.75", "0.30"),
        "claude-3-7-sonnet*": ("3", "15", "3.75", "0.30"),
        "claude-haiku-4-5*": ("1", "5", "1.25", "0.10"),
        "claude-3-5-haiku*": ("0.80", "4", "1", "0.08"),
        "gpt-5-mini*": ("0.25", "2", "0", "0.025"),
        "gpt-5-nano*": ("0.05", "0.40", "0", "0.005"),
        "gpt-5*": ("1.25", "10", "0", "0.125"),
        "gpt-4.1-mini*": ("0.40", "1.60", "0", "0.10"),
        "gpt-4.1*": ("2", "8", "0", "0.50"),
        "o4-mini*": ("1.10", "4.40", "0", "0.275"),
        "gemini-2.5-pro*": ("1.25", "10", "0", "0.125"),
        "gemini-2.5-flash-lite*": ("0.10", "0.40", "0", "0.01"),
        "gemini-2.5-flash*": ("0.30", "2.50", "0", "0.03"),
    }.items()
}

_Dollars = Annotated[float, Field(ge=0, le=1e9, allow_inf_nan=False)]


class ModelPrice(Section):
    """One model's prices, US dollars per million tokens."""

    input: _Dollars = Field(description="Input tokens neither written to nor read from the prompt cache.")
    output: _Dollars = Field(description="Output tokens (reasoning among them).")
    cache_write: _Dollars = Field(default=0, description="Input tokens written to the prompt cache.")
    cache_read: _Dollars = Field(default=0, description="Input tokens read from the prompt cache.")

    @property
    def price(self) -> Price:
        # as written in the file (`0.3`), not as the float nearest it
        return Price(*(Decimal(str(v)) for v in (self.input, self.output, self.cache_write, self.cache_read)))


class PricingSettings(Section):
    models: dict[str, ModelPrice] = Field(
        default_factory=dict,
        description="Prices by model name, a glob (`claude-sonnet-4*`, any case), matched before the-loop's pinned "
        f"table (dated {PRICES_DATED}, docs/costs.md); the first that matches prices a model. A model matched "
        "nowhere is counted in tokens only.",
    )

    def table(self) -> PriceTable:
        own = {pattern: entry.price for pattern, entry in self.models.items()}
        return PriceTable.of(PINNED_PRICES, dated=PRICES_DATED, before=own)


def _glob(text: str) -> str:
    if any(ord(c) < 32 for c in text) or len(text) > 200:
        raise ValueError(f"must be a glob of printable characters, at most 200 (got {text!r})")
    return text.strip()


class BudgetSettings(Section):
    """One allowance (docs/costs.md#budgets)."""

    scope: Literal["item", "repository", "label", "author", "day", "month"] = Field(
        description="What it covers: each `item`, `repository`, `label` or `author` (a comment's) on its own, or "
        "every turn of a `day` or a `month` (UTC) together."
    )
    match: Annotated[str, AfterValidator(_glob)] = Field(
        default="",
        description="A glob (any case) over what the scope names: `owner/repo#42`, `owner/repo`, a label, a login; "
        "for `day` and `month`, the repositories (`owner/repo`) it covers. Empty: all.",
    )
    usd: _Dollars | None = Field(default=None, description="Money allowed, US dollars (estimated, as costs show).")
    tokens: int | None = Field(default=None, ge=0, description="Tokens allowed (the four counts together).")

    @model_validator(mode="after")
    def _allows_something(self) -> BudgetSettings:
        if self.usd is None and self.tokens is None:
            raise ValueError("a budget needs `usd`, `tokens` or both")
        return self

    @property
    def budget(self) -> Budget:
        micro = None if self.usd is None else int(Decimal(str(self.usd)) * MICRO)
        return Budget(Scope(self.scope), self.match, micro_dollars=micro, tokens=self.tokens)
