"""`costs` and `budget`: what the agents' turns cost, from the store alone, and the allowances that
hold comments once spent (docs/costs.md)."""

from __future__ import annotations

import argparse
import json
import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation

from app.cli.context import CliContext, Commands, UsageProblem, command, group

__all__ = ["add_budget", "add_costs"]

_AGO = re.compile(r"(\d{1,5})([dh])")


def add_costs(commands: Commands) -> None:
    parser = command(
        commands,
        "costs",
        run_costs,
        """
        what the agents' turns cost, by item, author, repository, label, harness or day

        Every turn the-loop started with a comment and saw end, as its agent's own records said it
        (read once, at the turn's end, and kept in the store): tokens in, out, written to and read
        from the prompt cache, and money at the price table's prices — an estimate, never the bill
        (docs/costs.md). A turn whose usage was unknown is counted apart; a model with no price is
        counted in tokens only. By label, a turn with several labels counts under each.

        exit status: 0 told, 1 the store cannot be read, 2 usage or configuration error.
        """,
    )
    parser.add_argument("--by", choices=("item", "author", "repository", "label", "harness", "day"), default="item")
    parser.add_argument(
        "--since", metavar="WHEN", help="only turns ended from then on: a date (2026-12-01, UTC) or an age (7d, 12h)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object (with `config` and `state_root`)")
    parser.set_defaults(users_config=True)


def add_budget(commands: Commands) -> None:
    budgets = group(commands, "budget", "where each budget stands, and raising one (docs/costs.md#budgets)")
    listing = command(
        budgets,
        "list",
        run_budget_list,
        """
        where each budget stands in its current period, the nearest to spent first

        exit status: 0 told, 1 the store cannot be read, 2 usage or configuration error.
        """,
    )
    listing.add_argument("--json", action="store_true", help="one JSON object (with `config` and `state_root`)")
    raising = command(
        budgets,
        "raise",
        run_budget_raise,
        """
        give a configured budget another allowance, on every host of the store

        The allowance replaces the configured one (in money, tokens or both) until `budget reset`;
        the comments it held go at the next cycle. The budget is named as `budget list` names it:
        its scope, and `:match` when it has one (`day`, `label:needs-agent`).

        exit status: 0 raised, 1 the store cannot be written, 2 usage or configuration error.
        """,
    )
    raising.add_argument("budget", metavar="BUDGET", help="its name: `day`, `item`, `repository:acme/*`, ...")
    raising.add_argument("--usd", metavar="DOLLARS", help="money allowed, US dollars")
    raising.add_argument("--tokens", metavar="N", type=int, help="tokens allowed")
    resetting = command(
        budgets,
        "reset",
        run_budget_reset,
        """
        give a raised budget its configured allowance again

        exit status: 0 done, 1 the store cannot be written, 2 usage or configuration error.
        """,
    )
    resetting.add_argument("budget", metavar="BUDGET", help="its name, as `budget list` gives it")


def since_of(text: str | None, now: datetime) -> datetime | None:
    """`--since`: a date (midnight UTC) or an age (`7d`, `12h`); a usage error names what is accepted."""
    if text is None:
        return None
    ago = _AGO.fullmatch(text.strip())
    if ago:
        amount, unit = int(ago.group(1)), ago.group(2)
        return now - (timedelta(days=amount) if unit == "d" else timedelta(hours=amount))
    try:
        day = datetime.strptime(text.strip(), "%Y-%m-%d")
    except ValueError:
        raise UsageProblem(f"costs: --since {text!r}: give a date (2026-12-01) or an age (7d, 12h)") from None
    return day.replace(tzinfo=UTC)


def run_costs(args: argparse.Namespace, context: CliContext) -> int:
    from app.usecases.views.costs import money, tallied, total

    container = context.container
    now = container.clock().now()
    since = since_of(args.since, now)
    costs = container.store().costs(since=since) if container.store_present() else []
    rows, whole = tallied(costs, args.by), total(costs)
    if args.json:
        document = {
            "by": args.by,
            "since": since.isoformat() if since else None,
            "estimated": True,
            "prices_dated": context.settings.pricing.table().dated,
            "rows": [row.as_json() for row in rows],
            "total": whole.as_json(),
        }
        print(json.dumps(document | context.where_json(), ensure_ascii=True))
        return 0
    if not rows:
        print("no turn's cost is recorded" + (f" since {since:%Y-%m-%d %H:%M} UTC" if since else ""))
        return 0
    width = max(len(args.by), *(len(row.key) for row in rows))
    print(f"{args.by:<{width}}  {'turns':>5}  {'in':>10}  {'out':>9}  {'cache w':>10}  {'cache r':>11}  money")
    for row in [*rows, whole]:
        print(
            f"{row.key:<{width}}  {row.turns:>5}  {row.input:>10,}  {row.output:>9,}  {row.cache_write:>10,}"
            f"  {row.cache_read:>11,}  {money(row)}"
        )
    print(f"money is estimated at the price table of {context.settings.pricing.table().dated} (docs/costs.md)")
    return 0


def _named(context: CliContext, name: str) -> str:
    known = [entry.budget.key for entry in context.settings.budgets]
    if name not in known:
        listed = ", ".join(known) or "none is configured (`budgets`)"
        raise UsageProblem(f"budget: no budget {name!r}; the configured ones: {listed}")
    return name


def run_budget_list(args: argparse.Namespace, context: CliContext) -> int:
    from app.usecases.delivery.spending import Spending
    from app.usecases.views.costs import standings
    from domain.pricing import dollars
    from domain.spending import Budget, Standing

    container = context.container
    now = container.clock().now()
    configured = context.settings.budget_list
    raised: dict[str, Budget] = {}
    found: list[Standing] = []
    present = container.store_present()  # a read: no store is made where there is none
    if present:
        store = container.store()
        prices = context.settings.pricing.table()
        raised = Spending(store, prices, configured, container.clock(), container.events(), _no_notice).raised()
    budgets = [raised.get(budget.key, budget) for budget in configured]
    if present:
        found = standings(budgets, lambda since: store.costs(since=since), now)
    if args.json:
        rows = [
            {
                "budget": s.subject.budget.key,
                "subject": s.subject.name,
                "period": s.period,
                "spent_usd": s.spent.micro_dollars / 1_000_000,
                "allowed_usd": None if s.subject.budget.micro_dollars is None else s.subject.budget.micro_dollars / 1e6,
                "spent_tokens": s.spent.tokens,
                "allowed_tokens": s.subject.budget.tokens,
                "share": round(s.share, 4),
                "reached": s.reached,
                "raised": s.subject.budget.key in raised,
            }
            for s in found
        ]
        print(json.dumps({"budgets": [b.key for b in budgets], "standings": rows} | context.where_json()))
        return 0
    if not budgets:
        print("no budget is configured (`budgets`, docs/costs.md)")
        return 0
    for budget in budgets:
        allowed = [dollars(budget.micro_dollars) if budget.micro_dollars is not None else "", _tokens(budget.tokens)]
        mark = " (raised)" if budget.key in raised else ""
        print(f"{budget.key}: {' and '.join(a for a in allowed if a)}{mark}")
        for standing in [s for s in found if s.subject.budget.key == budget.key]:
            state = "SPENT" if standing.reached else f"{standing.share:.0%}"
            spent = f"{dollars(standing.spent.micro_dollars)}, {standing.spent.tokens:,} tokens"
            period = f" {standing.period}" if standing.period else ""
            print(f"  {standing.subject.name}{period}: {spent} — {state}")
    return 0


def _tokens(tokens: int | None) -> str:
    return "" if tokens is None else f"{tokens:,} tokens"


def _no_notice(*_: object, **__: object) -> None:
    return None


def run_budget_raise(args: argparse.Namespace, context: CliContext) -> int:
    from app.usecases.delivery.spending import RAISED, raised_value
    from domain.pricing import MICRO

    name = _named(context, args.budget)
    if args.usd is None and args.tokens is None:
        raise UsageProblem("budget raise: give --usd, --tokens or both")
    micro = None
    if args.usd is not None:
        try:
            usd = Decimal(args.usd)
        except InvalidOperation:
            raise UsageProblem(f"budget raise: --usd {args.usd!r} is not an amount of dollars") from None
        if not usd.is_finite() or usd < 0 or usd > 10**9:
            raise UsageProblem(f"budget raise: --usd {args.usd!r} must be between 0 and 1000000000")
        micro = int(usd * MICRO)
    if args.tokens is not None and args.tokens < 0:
        raise UsageProblem("budget raise: --tokens must be 0 or more")
    configured = next(entry.budget for entry in context.settings.budgets if entry.budget.key == name)
    micro = micro if args.usd is not None else configured.micro_dollars
    tokens = args.tokens if args.tokens is not None else configured.tokens
    context.container.store().save_meta(f"{RAISED}{name}", raised_value(micro_dollars=micro, tokens=tokens))
    print(f"budget {name}: raised; its comments go at the next cycle of every host")
    return 0


def run_budget_reset(args: argparse.Namespace, context: CliContext) -> int:
    from app.usecases.delivery.spending import RAISED

    name = _named(context, args.budget)
    store = context.container.store()
    with store.transaction():
        if f"{RAISED}{name}" not in store.meta():
            print(f"budget {name}: not raised; it has its configured allowance")
            return 0
        store.save_meta(f"{RAISED}{name}", "")
    print(f"budget {name}: its configured allowance again")
    return 0
