"""What a turn cost, kept when its end is read, and the budgets that hold an item's comments once
what they cover has spent its allowance (domain/spending.py; docs/costs.md).

Every host reads the totals from the shared store, so a budget holds across hosts; a notice is given
once (a mark in the store), whichever host first sees the figure cross its line."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from domain.events import Event, Level
from domain.model import WorkItem
from domain.notice import budget_notice
from domain.ports import ClockPort, EventSink, StateStore
from domain.pricing import PriceTable, dollars
from domain.refs import WorkItemRef
from domain.spending import Budget, Scope, Spent, Standing, Subject, TurnCost
from domain.usage import TurnUsage, Usage

MARKS_KEPT = timedelta(days=62)  # a notice's mark outlives its month's period, then is dropped
RAISED = "budget.raised."  # a store meta key's prefix: the allowance `the-loop budget raise` set, by budget key

Notify = Callable[..., str | None]  # Feedback.notify: (item, body, **fields) -> the posted comment's id


@dataclass
class Spending:
    store: StateStore
    prices: PriceTable
    budgets: tuple[Budget, ...]
    clock: ClockPort
    events: EventSink
    notify: Notify

    def turn_ended(self, item: WorkItem, *, comment_id: str, author: str, harness: str, usage: Usage) -> TurnCost:
        """Keep what the turn cost (once: a second read records nothing), then tell the item of a budget
        this turn took past 80% or all of its allowance."""
        known = usage if isinstance(usage, TurnUsage) else None
        cost = TurnCost(
            item=item.ref,
            comment_id=comment_id,
            ended_at=self.clock.now(),
            harness=harness,
            author=author or "",
            labels=frozenset(label.casefold() for label in item.labels),
            usage=known,
            micro_dollars=self.prices.cost(known) if known is not None else None,
        )
        if self.store.record_cost(cost):
            for standing in self.standings(item.ref, cost.labels, cost.author):
                if standing.warned:
                    self._tell(item.ref, standing)
        return cost

    def holding(self, item: WorkItem, *, author: str = "") -> Standing | None:
        """The first budget covering the item (and the comment's author, when given) whose allowance is
        spent, told once on the item; None when its comments may go."""
        labels = frozenset(label.casefold() for label in item.labels)
        for standing in self.standings(item.ref, labels, author):
            if standing.reached:
                self._tell(item.ref, standing)
                return standing
        return None

    def standings(self, item: WorkItemRef, labels: frozenset[str], author: str) -> list[Standing]:
        """Where each budget covering these stands now, its raised allowance taken over the configured one."""
        if not self.budgets:
            return []
        now, raised = self.clock.now(), self.raised()
        found = []
        for configured in self.budgets:
            budget = raised.get(configured.key, configured)
            since, period = budget.period(now)
            for subject in budget.subjects(item, labels, author):
                spent = _total(self._spent(subject, since, item).items(), budget)
                found.append(Standing(subject, spent, period, budget.next_period(now)))
        return found

    def raised(self) -> dict[str, Budget]:
        """The budgets `the-loop budget raise` gave another allowance, by key (a configured budget's)."""
        by_key = {budget.key: budget for budget in self.budgets}
        found: dict[str, Budget] = {}
        for key, text in self.store.meta().items():
            name = key.removeprefix(RAISED)
            if key.startswith(RAISED) and name in by_key:
                allowance = _allowance(text)
                if allowance is not None:
                    found[name] = replace(by_key[name], micro_dollars=allowance[0], tokens=allowance[1])
        return found

    def _spent(self, subject: Subject, since: datetime | None, item: WorkItemRef) -> dict[str, Spent]:
        scope, name = subject.budget.scope, subject.name
        if scope is Scope.ITEM:
            return self.store.spent(item=item, since=since)
        if scope is Scope.REPOSITORY:
            return self.store.spent(repo=name, since=since)
        if scope is Scope.LABEL:
            return self.store.spent(label=name, since=since)
        if scope is Scope.AUTHOR:
            return self.store.spent(author=name, since=since)
        return self.store.spent(since=since)

    def _tell(self, item: WorkItemRef, standing: Standing) -> None:
        """The item's notice and the event, once for this budget, subject, period and allowance."""
        budget, reached = standing.subject.budget, standing.reached
        level = "reached" if reached else "warned"
        allowance = f"{budget.micro_dollars}/{budget.tokens}"
        mark = f"budget|{budget.key}|{standing.subject.name}|{standing.period}|{allowance}|{level}|{item}"
        now = self.clock.now()
        if not self.store.mark_once(mark, now, forget_before=now - MARKS_KEPT):
            return
        fields = _figures(standing)
        self.events.emit(
            Event.BUDGET_REACHED if reached else Event.BUDGET_WARNED,
            level=Level.WARNING,
            work_item=str(item),
            budget=budget.key,
            subject=standing.subject.name,
            period=standing.period,
            **fields,
        )
        again = standing.next_period
        body = budget_notice(
            item,
            budget=budget.key.replace("`", "'"),
            standing=_said(standing),
            reached=reached,
            again=f"at {again:%Y-%m-%d %H:%M} UTC" if again is not None else "",
        )
        self.notify(item, body, notice=f"budget-{level}")


def _total(by_repo: Iterable[tuple[str, Spent]], budget: Budget) -> Spent:
    """A day's or month's budget sums the repositories it covers; the others were asked for theirs only."""
    total = Spent()
    for repo, spent in by_repo:
        if budget.scope not in {Scope.DAY, Scope.MONTH} or budget.counts(repo):
            total = total + spent
    return total


def _allowance(text: str) -> tuple[int | None, int | None] | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    micro, tokens = data.get("micro_dollars"), data.get("tokens")
    if not all(v is None or (isinstance(v, int) and not isinstance(v, bool) and v >= 0) for v in (micro, tokens)):
        return None
    return micro, tokens


def raised_value(*, micro_dollars: int | None, tokens: int | None) -> str:
    """What `the-loop budget raise` keeps in the store for a budget (read back by `Spending.raised`)."""
    return json.dumps({"micro_dollars": micro_dollars, "tokens": tokens})


def _figures(standing: Standing) -> dict[str, Any]:
    budget, spent = standing.subject.budget, standing.spent
    return {
        "spent_usd": spent.micro_dollars / 1_000_000,
        "allowed_usd": None if budget.micro_dollars is None else budget.micro_dollars / 1_000_000,
        "spent_tokens": spent.tokens,
        "allowed_tokens": budget.tokens,
    }


def _said(standing: Standing) -> str:
    """`$8.12 of $10.00 (estimated)` and/or `812,000 of 1,000,000 tokens`, with what and when it covers."""
    budget, spent = standing.subject.budget, standing.spent
    parts = []
    if budget.micro_dollars is not None:
        parts.append(f"{dollars(spent.micro_dollars)} of {dollars(budget.micro_dollars)} (estimated)")
    if budget.tokens is not None:
        parts.append(f"{spent.tokens:,} of {budget.tokens:,} tokens")
    # never the label's or the author's own text: the item's page shows them, the notice need not echo them
    covers = {
        Scope.ITEM: "by this item",
        Scope.REPOSITORY: "in this repository",
        Scope.LABEL: "under one of this item's labels",
        Scope.AUTHOR: "by the comments of this comment's author",
        Scope.DAY: "today (UTC)",
        Scope.MONTH: "this month (UTC)",
    }[budget.scope]
    return f"{' and '.join(parts)} {covers}"
