"""The sandbox tracker: work items and comments in a local SQLite file, no network at all."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from adapters.sandbox_rows import SANDBOX_SCHEMA, SandboxEntry, comment_from_row, work_item_from_row
from adapters.sqlite_schema import open_checked
from domain.errors import TrackerError
from domain.model import Comment, CommentBatch, ItemKind, ItemState, Reaction, WorkItem
from domain.ports import TrackerPort
from domain.refs import RepoRef, WorkItemRef

FILE_NAME = "sandbox.sqlite3"


class SandboxTracker(TrackerPort):
    """A `TrackerPort` over `<state.root>/sandbox.sqlite3`, for demos and tests without GitHub.

    Refs are ordinary (`github:owner/repo#N`); `provider: sandbox` in a source picks this
    adapter. Comment ids are one sequence across the file, so the cursor is the last id seen:
    every comment comes once, oldest first. The CLI writing while the daemon polls is safe
    (SQLite WAL, `BEGIN IMMEDIATE`, a busy timeout). Failure modes: `StateError` when the file
    is unreadable or corrupt (at construction); `TrackerError` naming the repository for an
    unknown item or comment, or a database error.
    """

    def __init__(self, path: Path, *, clock: Callable[[], datetime], login: str = "the-loop") -> None:
        self.path = path
        self.login = login  # author of what `post_comment` writes, as gh's user would be
        self._clock = clock
        self._db = open_checked(path, busy_timeout_seconds=10.0, schema=SANDBOX_SCHEMA)
        self._db.row_factory = sqlite3.Row
        self._lock = threading.RLock()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # --- arranging the world -----------------------------------------------------------

    def create_item(
        self,
        repo: RepoRef,
        title: str,
        body: str = "",
        *,
        author: str | None = "demo",
        labels: tuple[str, ...] = (),
        kind: ItemKind = ItemKind.ISSUE,
    ) -> WorkItemRef:
        with self._tx(repo):
            (last,) = self._db.execute("SELECT MAX(number) FROM items WHERE repo = ?", (_key(repo),)).fetchone()
            ref = WorkItemRef(repo, (last or 0) + 1)
            self._db.execute(
                "INSERT INTO items VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (_key(repo), ref.number, str(ref), title, body, author, json.dumps(sorted(labels)), kind.value, "open"),
            )
        return ref

    def add_comment(self, ref: WorkItemRef, body: str, author: str | None = "demo") -> Comment:
        with self._tx(ref.repo):
            self._require_item(ref)
            cursor = self._db.execute(
                "INSERT INTO comments (item, repo, author, body, created_at) VALUES (?, ?, ?, ?, ?)",
                (str(ref), _key(ref.repo), author, body, self._clock().isoformat()),
            )
            row = self._db.execute("SELECT * FROM comments WHERE seq = ?", (cursor.lastrowid,))
            return comment_from_row(row.fetchone())

    def close_item(self, ref: WorkItemRef, state: ItemState = ItemState.CLOSED) -> None:
        with self._tx(ref.repo):
            self._require_item(ref)
            self._db.execute("UPDATE items SET state = ? WHERE item = ?", (state.value, str(ref)))

    def set_labels(self, ref: WorkItemRef, labels: tuple[str, ...]) -> None:
        with self._tx(ref.repo):
            self._require_item(ref)
            self._db.execute("UPDATE items SET labels = ? WHERE item = ?", (json.dumps(sorted(labels)), str(ref)))

    # --- reading it back ---------------------------------------------------------------

    def list_items(self) -> list[SandboxEntry]:
        rows = self._read(None, "SELECT * FROM items")
        return sorted((SandboxEntry(work_item_from_row(r), ItemState(r["state"])) for r in rows), key=_by_ref)

    def comments(self, ref: WorkItemRef) -> list[Comment]:
        rows = self._read(ref.repo, "SELECT * FROM comments WHERE item = ? ORDER BY seq", str(ref))
        return [comment_from_row(r) for r in rows]

    def reactions(self) -> list[tuple[str, Reaction]]:
        rows = self._read(None, "SELECT comment_id, reaction FROM reactions ORDER BY rowid")
        return [(r["comment_id"], Reaction(r["reaction"])) for r in rows]

    def posted(self) -> list[Comment]:
        """What the-loop posted (its notices), oldest first."""
        rows = self._read(None, "SELECT * FROM comments WHERE author = ? ORDER BY seq", self.login)
        return [comment_from_row(r) for r in rows]

    # --- TrackerPort -------------------------------------------------------------------

    def work_items(self, repo: RepoRef, label: str) -> list[WorkItem]:
        rows = self._read(repo, "SELECT * FROM items WHERE repo = ? AND state = 'open' ORDER BY number", _key(repo))
        return [item for item in map(work_item_from_row, rows) if label in item.labels]

    def new_comments(self, repo: RepoRef, cursor: str | None) -> CommentBatch:
        (last,) = self._read(repo, "SELECT COALESCE(MAX(seq), 0) FROM comments")[0]
        if cursor is None:
            return CommentBatch((), str(last))  # like GitHub's adapter: the stream starts now
        since = _cursor_value(repo, cursor)
        rows = self._read(
            repo,
            "SELECT * FROM comments WHERE repo = ? AND seq > ? AND seq <= ? ORDER BY seq",
            _key(repo), since, last,
        )  # fmt: skip
        return CommentBatch(tuple(comment_from_row(r) for r in rows), str(max(last, since)))

    def item_state(self, item: WorkItemRef, label: str) -> ItemState:
        rows = self._read(item.repo, "SELECT * FROM items WHERE item = ?", str(item))
        if not rows:
            raise TrackerError(f"{item.repo}: {item} not found in the sandbox")
        state = ItemState(rows[0]["state"])
        if state is ItemState.OPEN and label not in work_item_from_row(rows[0]).labels:
            return ItemState.UNLABELED
        return state

    def react(self, comment: Comment, reaction: Reaction) -> None:
        with self._tx(comment.item.repo):
            found = self._db.execute("SELECT 1 FROM comments WHERE seq = ?", (_seq(comment.item.repo, comment.id),))
            if found.fetchone() is None:
                raise TrackerError(f"{comment.item.repo}: comment {comment.id} not found in the sandbox")
            self._db.execute("INSERT INTO reactions VALUES (?, ?)", (comment.id, reaction.value))

    def post_comment(self, item: WorkItemRef, body: str) -> None:
        self.add_comment(item, body, author=self.login)

    # --- plumbing ----------------------------------------------------------------------

    def _require_item(self, ref: WorkItemRef) -> None:
        if self._db.execute("SELECT 1 FROM items WHERE item = ?", (str(ref),)).fetchone() is None:
            raise TrackerError(f"{ref.repo}: {ref} not found in the sandbox")

    @contextmanager
    def _tx(self, repo: RepoRef) -> Iterator[None]:
        with self._lock, self._translated(repo):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _read(self, repo: RepoRef | None, sql: str, *params: Any) -> list[sqlite3.Row]:
        with self._lock, self._translated(repo):
            return self._db.execute(sql, params).fetchall()

    @contextmanager
    def _translated(self, repo: RepoRef | None) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise TrackerError(f"{repo or 'sandbox'}: sandbox {self.path}: {exc}") from exc


def _key(repo: RepoRef) -> str:
    return f"{repo.host}/{repo.owner}/{repo.name}"


def _by_ref(entry: SandboxEntry) -> WorkItemRef:
    return entry.item.ref


def _seq(repo: RepoRef, comment_id: str) -> int:
    if not comment_id.isdigit():
        raise TrackerError(f"{repo}: comment id {comment_id!r} is not a sandbox comment")
    return int(comment_id)


def _cursor_value(repo: RepoRef, cursor: str) -> int:
    if not cursor.isdigit():
        raise TrackerError(f"{repo}: sandbox cursor {cursor!r} is not one this tracker issued")
    return int(cursor)
