"""What a turn's tokens cost in money: a price per million tokens for each model, in US dollars, and
the sum of a turn's four counts at its model's prices. Always an estimate: the provider's bill is
what was paid (its tiers, discounts and rounding are not modelled here).

Money is kept in whole micro-dollars (millionths of a US dollar): a turn's cost is rounded once,
half up, to the micro-dollar, so the totals of many turns are exact sums of what each said."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from domain.usage import TurnUsage

MICRO = 1_000_000  # micro-dollars in a dollar


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million tokens of each kind (the Messages API's partition, `TurnUsage`'s)."""

    input: Decimal
    output: Decimal
    cache_write: Decimal
    cache_read: Decimal

    def micro_dollars(self, usage: TurnUsage) -> int:
        """`usage` at these prices, rounded half up to the micro-dollar: a price per million tokens is
        a price in micro-dollars per token."""
        exact = (
            self.input * usage.input
            + self.output * usage.output
            + self.cache_write * usage.cache_write
            + self.cache_read * usage.cache_read
        )
        return int(exact.quantize(Decimal(1), rounding=ROUND_HALF_UP))


@dataclass(frozen=True, slots=True)
class PriceTable:
    """Prices by model name, each a glob (`claude-sonnet-4*`), matched case-insensitively in order:
    the first that matches a model prices it. `dated`: when the prices were read off the providers'
    pages (the operator's own entries come first and are theirs to date)."""

    prices: tuple[tuple[str, Price], ...]
    dated: str

    @classmethod
    def of(cls, prices: Mapping[str, Price], *, dated: str, before: Mapping[str, Price] | None = None) -> PriceTable:
        """`before` (the operator's entries) ahead of `prices` (the pinned table)."""
        ordered = [*(before or {}).items(), *prices.items()]
        return cls(tuple((pattern.casefold(), price) for pattern, price in ordered), dated)

    def price(self, model: str) -> Price | None:
        name = model.casefold()
        return next((price for pattern, price in self.prices if fnmatch.fnmatchcase(name, pattern)), None)

    def cost(self, usage: TurnUsage) -> int | None:
        """What `usage` cost in micro-dollars, estimated; None ("tokens only") when its model is not in
        the table, or when several models answered the turn: which of its tokens each took is not
        recorded, unless they have one price."""
        models = [name for name in usage.model.split(", ") if name]
        prices = {self.price(name) for name in models}
        if not models or None in prices or len(prices) != 1:
            return None
        (price,) = prices
        assert price is not None
        return price.micro_dollars(usage)


def dollars(micro: int) -> str:
    """Micro-dollars as a person reads money: `$0.0123` below a dollar (four places: a turn's cost is
    often cents), `$12.34` from one dollar on."""
    value = Decimal(micro) / MICRO
    places = Decimal("0.0001") if abs(value) < 1 else Decimal("0.01")
    return f"${value.quantize(places, rounding=ROUND_HALF_UP)}"
