"""The rows of what each turn cost and of the budgets' notices, as both SQL stores keep them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from domain.refs import WorkItemRef
from domain.spending import Spent, TurnCost
from domain.usage import TurnUsage

_INSERT = (
    "INSERT INTO turn_costs (item, comment, ended_at, repo, harness, author, labels, model, known,"
    " tokens_in, tokens_out, cache_write, cache_read, micro_dollars)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
)
_COSTS = (
    "SELECT item, comment, ended_at, repo, harness, author, labels, model, known,"
    " tokens_in, tokens_out, cache_write, cache_read, micro_dollars FROM turn_costs"
)
_SPENT = (
    "SELECT repo, COALESCE(SUM(micro_dollars), 0), COALESCE(SUM(tokens_in + tokens_out + cache_write + cache_read), 0),"
    " COUNT(*), COALESCE(SUM(1 - known), 0), COUNT(micro_dollars) FROM turn_costs"
)


class SpendingRows:
    """The turns' costs and the budgets' marks, as `SqlStateStore` keeps them (a mixin: its `_run`,
    `_change`, `transaction`)."""

    def record_cost(self: Any, cost: TurnCost) -> bool:
        usage = cost.usage or TurnUsage(0, 0, 0, 0)
        labels = "".join(f"\n{label}" for label in sorted(cost.labels)) + "\n"
        row = (
            str(cost.item),
            cost.comment_id,
            _utc(cost.ended_at),
            _repo_name(cost.item),
            cost.harness,
            cost.author.casefold(),
            labels,
            usage.model,
            int(cost.usage is not None),
            usage.input,
            usage.output,
            usage.cache_write,
            usage.cache_read,
        )
        with self.transaction():
            return bool(self._change(_INSERT, *row, cost.micro_dollars) == 1)

    def costs(self: Any, *, since: datetime | None = None, item: WorkItemRef | None = None) -> list[TurnCost]:
        where, params = ["ended_at >= ?"], [_utc(since) if since else ""]
        if item is not None:
            where.append("item = ?")
            params.append(str(item))
        rows = self._run(_COSTS + " WHERE " + " AND ".join(where) + " ORDER BY ended_at", *params)
        with self._decoding():
            return [_cost(row) for row in rows]

    def spent(
        self: Any,
        *,
        since: datetime | None = None,
        item: WorkItemRef | None = None,
        repo: str | None = None,
        label: str | None = None,
        author: str | None = None,
    ) -> dict[str, Spent]:
        where, params = ["ended_at >= ?"], [_utc(since) if since else ""]
        for column, value in (("item", str(item) if item else None), ("repo", repo), ("author", author)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value.casefold() if column == "author" else value)
        if label is not None:
            where.append(self.dialect.has_label)
            params.append(f"\n{label.casefold()}\n")
        rows = self._run(_SPENT + " WHERE " + " AND ".join(where) + " GROUP BY repo", *params)
        return {str(r[0]): Spent(int(r[1]), int(r[2]), int(r[3]), int(r[4]), int(r[5])) for r in rows}

    def mark_once(self: Any, mark: str, at: datetime, *, forget_before: datetime | None = None) -> bool:
        with self.transaction():
            if forget_before is not None:
                self._change("DELETE FROM budget_marks WHERE at < ?", _utc(forget_before))
            return bool(
                self._change("INSERT INTO budget_marks VALUES (?, ?) ON CONFLICT DO NOTHING", mark, _utc(at)) == 1
            )


def _cost(row: tuple[Any, ...]) -> TurnCost:
    item, comment, ended, _repo, harness, author, labels, model, known, t_in, t_out, c_write, c_read, micro = row
    usage = TurnUsage(int(t_in), int(t_out), int(c_write), int(c_read), str(model)) if known else None
    return TurnCost(
        item=WorkItemRef.parse(str(item)),
        comment_id=str(comment),
        ended_at=datetime.fromisoformat(str(ended)),
        harness=str(harness),
        author=str(author),
        labels=frozenset(label for label in str(labels).split("\n") if label),
        usage=usage,
        micro_dollars=None if micro is None else int(micro),
    )


def _utc(at: datetime) -> str:
    """A time as the cost rows keep it: UTC, one format, so text order is time order."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")


def _repo_name(item: WorkItemRef) -> str:
    return f"{item.repo.owner}/{item.repo.name}"
