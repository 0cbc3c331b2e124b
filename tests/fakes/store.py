"""An in-memory state store with the SQLite store's semantics, transactions included."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime

from domain.errors import StaleWrite, StateError
from domain.ledger import Ledger
from domain.model import Comment, SessionRecord
from domain.ports import StateStore
from domain.refs import RepoRef, WorkItemRef
from domain.spending import Spent, TurnCost
from domain.webhook import InboxEntry


@dataclass
class _Tables:
    ledgers: dict[WorkItemRef, Ledger] = field(default_factory=dict)
    sessions: dict[WorkItemRef, SessionRecord] = field(default_factory=dict)
    cursors: dict[RepoRef, str] = field(default_factory=dict)
    meta: dict[str, str] = field(default_factory=dict)
    inbox: dict[WorkItemRef, dict[str, Comment]] = field(default_factory=dict)
    costs: dict[tuple[WorkItemRef, str], TurnCost] = field(default_factory=dict)
    marks: dict[str, datetime] = field(default_factory=dict)

    def copy(self) -> _Tables:
        # values are frozen dataclasses, so copying the dicts is a full snapshot
        return replace(
            self,
            ledgers=dict(self.ledgers),
            sessions=dict(self.sessions),
            cursors=dict(self.cursors),
            meta=dict(self.meta),
            inbox={item: dict(kept) for item, kept in self.inbox.items()},
            costs=dict(self.costs),
            marks=dict(self.marks),
        )


class FakeStateStore(StateStore):
    """Dicts behind the `StateStore` port. An exception inside `transaction()` restores the
    state as it was when that (possibly nested) transaction began, like a SQLite savepoint.
    Stored ledgers and records carry their row's version, as the SQLite store's reads do.

    `fail_writes` makes every write raise `StateError`, as a full disk or a broken file would.
    """

    def __init__(self) -> None:
        self.tables = _Tables()
        self.fail_writes = False
        self.commits = 0  # outermost transactions and lone writes that landed
        self._open: list[_Tables] = []  # snapshots of the transactions in progress, outermost first
        # held for a whole transaction, as the SQLite store does: a thread's rollback must not
        # undo another thread's writes
        self._lock = threading.RLock()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            snapshot = self.tables.copy()
            outermost = not self._open
            self._open.append(snapshot)
            try:
                yield
            except BaseException:
                self.tables = snapshot
                raise
            finally:
                self._open.pop()
            if outermost:
                self.commits += 1

    @contextmanager
    def _write(self) -> Iterator[None]:
        if self.fail_writes:
            raise StateError("fake state store: writes are failing")
        with self.transaction():
            yield

    def ledger(self, item: WorkItemRef) -> Ledger | None:
        return self.tables.ledgers.get(item)

    def save_ledger(self, ledger: Ledger) -> Ledger:
        with self._write():
            stored = _version(self.tables.ledgers.get(ledger.item))
            if stored != ledger.version:
                raise StaleWrite("ledger", str(ledger.item), read=ledger.version, stored=stored)
            saved = self.tables.ledgers[ledger.item] = replace(ledger, version=stored + 1)
            return saved

    def session(self, item: WorkItemRef) -> SessionRecord | None:
        return self.tables.sessions.get(item)

    def sessions(self) -> list[SessionRecord]:
        with self._lock:
            return [self.tables.sessions[item] for item in sorted(self.tables.sessions)]

    def save_session(self, record: SessionRecord) -> SessionRecord:
        with self._write():
            stored = _version(self.tables.sessions.get(record.item))
            if stored != record.version:
                raise StaleWrite("session record", str(record.item), read=record.version, stored=stored)
            saved = self.tables.sessions[record.item] = replace(record, version=stored + 1)
            return saved

    def drop_session(self, record: SessionRecord) -> None:
        with self._write():
            stored = _version(self.tables.sessions.get(record.item))
            if stored != record.version:
                raise StaleWrite("session record", str(record.item), read=record.version, stored=stored)
            self.tables.sessions.pop(record.item, None)

    def forget(self, item: WorkItemRef) -> None:
        with self._write():
            self.tables.ledgers.pop(item, None)
            self.tables.sessions.pop(item, None)

    def cursor(self, repo: RepoRef) -> str | None:
        return self.tables.cursors.get(repo)

    def save_cursor(self, repo: RepoRef, cursor: str | None) -> None:
        with self._write():
            if cursor is None:
                self.tables.cursors.pop(repo, None)
            else:
                self.tables.cursors[repo] = cursor

    def inbox_add(self, comments: Iterable[Comment]) -> None:
        with self._write():
            for comment in comments:
                self.tables.inbox.setdefault(comment.item, {}).setdefault(comment.id, comment)

    def inbox(self, item: WorkItemRef) -> list[Comment]:
        with self._lock:
            kept = list(self.tables.inbox.get(item, {}).values())
        return sorted(kept, key=lambda c: (c.created_at, c.id))

    def inbox_remove(self, item: WorkItemRef, comment_ids: Iterable[str]) -> None:
        with self._write():
            kept = self.tables.inbox.get(item, {})
            for comment_id in comment_ids:
                kept.pop(comment_id, None)
            if not kept:
                self.tables.inbox.pop(item, None)

    def inbox_items(self) -> list[WorkItemRef]:
        with self._lock:
            return sorted(self.tables.inbox)

    def inbox_index(self) -> list[InboxEntry]:
        with self._lock:
            kept = [c for comments in self.tables.inbox.values() for c in comments.values()]
        # repr: about the bytes a store keeps for it (its JSON), and never fewer than its text's
        return [InboxEntry(c.item, c.id, c.created_at, len(repr(c).encode())) for c in kept]

    def items(self) -> Iterator[WorkItemRef]:
        with self._lock:
            return iter(sorted(self.tables.ledgers.keys() | self.tables.sessions.keys()))

    def meta(self) -> Mapping[str, str]:
        with self._lock:
            return dict(self.tables.meta)

    def save_meta(self, key: str, value: str) -> None:
        with self._write():
            self.tables.meta[key] = value

    def record_cost(self, cost: TurnCost) -> bool:
        with self._write():
            if (cost.item, cost.comment_id) in self.tables.costs:
                return False
            self.tables.costs[(cost.item, cost.comment_id)] = replace(cost, author=cost.author.casefold())
            return True

    def costs(self, *, since: datetime | None = None, item: WorkItemRef | None = None) -> list[TurnCost]:
        with self._lock:
            found = [
                c
                for c in self.tables.costs.values()
                if (since is None or c.ended_at >= since) and (item is None or c.item == item)
            ]
        return sorted(found, key=lambda c: c.ended_at)

    def spent(
        self,
        *,
        since: datetime | None = None,
        item: WorkItemRef | None = None,
        repo: str | None = None,
        label: str | None = None,
        author: str | None = None,
    ) -> dict[str, Spent]:
        by_repo: dict[str, Spent] = {}
        for cost in self.costs(since=since, item=item):
            name = f"{cost.item.repo.owner}/{cost.item.repo.name}"
            if repo is not None and name != repo:
                continue
            if label is not None and label.casefold() not in cost.labels:
                continue
            if author is not None and cost.author != author.casefold():
                continue
            by_repo[name] = by_repo.get(name, Spent()) + Spent.of(cost)
        return by_repo

    def mark_once(self, mark: str, at: datetime, *, forget_before: datetime | None = None) -> bool:
        with self._write():
            if forget_before is not None:
                self.tables.marks = {m: t for m, t in self.tables.marks.items() if t >= forget_before}
            if mark in self.tables.marks:
                return False
            self.tables.marks[mark] = at
            return True


def _version(row: Ledger | SessionRecord | None) -> int:
    return 0 if row is None else row.version
