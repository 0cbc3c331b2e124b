"""The fleet's costs panel (HTML): the last days one by one — their figures in a table the page's script
draws as bars (the table stays readable without it) — and the dearest items of those days. Money is
always said to be estimated."""

from __future__ import annotations

from html import escape

from app.usecases.views.costs import Tally, money, turns
from app.usecases.views.page_costs import DAYS, PageCosts
from app.web.views import item_link
from domain.errors import InvalidRef
from domain.pricing import dollars
from domain.refs import WorkItemRef


def costs_panel(figures: PageCosts) -> str:
    """The last DAYS days one by one (a bar each, drawn by the page's script from the table's rows) and
    the dearest items of those days."""
    rows = "".join(
        f'<tr data-day="{day.key}" data-micro="{day.micro_dollars}" data-tokens="{day.tokens}" '
        f'data-said="{escape(_day_said(day))}"><td>{day.key}</td><td>{escape(money(day) if day.turns else "–")}</td>'
        f"<td>{day.tokens:,}</td><td>{day.turns}</td></tr>"
        for day in figures.days
    )
    top = "".join(
        f'<li data-top="{escape(item.key)}">{_item_link(item.key)} {escape(money(item))} '
        f"<small>({turns(item.turns)}, {item.tokens:,} tokens)</small></li>"
        for item in figures.top
    )
    return (
        f'<section id="costs"><h2>Costs <small>(estimated, the last {DAYS} days, UTC)</small></h2>'
        f"{_chart(figures.days)}"
        '<details><summary>by day</summary><table class="days" data-days><thead><tr><th>day</th>'
        f"<th>cost (estimated)</th><th>tokens</th><th>turns</th></tr></thead><tbody>{rows}</tbody></table></details>"
        "<h3>The dearest items of those days <small>(estimated)</small></h3>"
        f'<ol class="top">{top or "<li>none</li>"}</ol></section>'
    )


def _chart(days: tuple[Tally, ...]) -> str:
    """Where the script draws the bars: their height money, or tokens when no turn had a price; or
    why there are none."""
    by_money = any(day.micro_dollars for day in days)
    peak = max(days, key=lambda d: (d.micro_dollars, d.tokens))
    if not (peak.micro_dollars or peak.tokens):
        ended = sum(day.turns for day in days)
        none = "; none said its usage" if ended else ""
        return f"<p>{turns(ended) if ended else 'No turn'} ended in the last {DAYS} days{none}.</p>"
    scale = f"{dollars(peak.micro_dollars)} estimated" if by_money else f"{peak.tokens:,} tokens (no price known)"
    return (
        f'<figure class="chart" data-chart="days" data-by="{"micro" if by_money else "tokens"}" '
        f'data-peak="{escape(scale)}" aria-label="cost per day, the last {DAYS} days"></figure>'
    )


def _day_said(day: Tally) -> str:
    """A bar's title: the day's money and what it left out, its tokens and turns."""
    return f"{day.key}: {money(day)}, {day.tokens:,} tokens, {turns(day.turns)}" if day.turns else f"{day.key}: no turn"


def _item_link(key: str) -> str:
    try:
        item = WorkItemRef.parse(key)
    except InvalidRef:
        return escape(key)
    return f'<a href="{escape(item_link(item))}">{escape(key)}</a>'
