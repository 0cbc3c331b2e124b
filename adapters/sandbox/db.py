"""The sandbox file: its tables, its transactions, and how its rows become domain values."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from adapters.sql.schema import Schema
from adapters.sql.sqlite_file import open_checked
from domain.errors import TrackerError
from domain.model import Comment, CommentKind, ItemKind, ItemState, WorkItem
from domain.refs import RepoRef, WorkItemRef

# per item and label, its latest `labeled` time: what `arming` reads
_LABELLED = (
    "CREATE TABLE IF NOT EXISTS labelled (item TEXT NOT NULL, label TEXT NOT NULL, at TEXT NOT NULL,"
    " PRIMARY KEY (item, label))"
)
# version 1 -> 2: when items were created and labelled, and when comments were edited; what a
# version 1 file holds has no such times (an item without them is armed when first asked)
_MIGRATE_1_TO_2 = (
    "ALTER TABLE items ADD COLUMN created_at TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE comments ADD COLUMN updated_at TEXT",
    _LABELLED,
)
# version 2 -> 3: who edited a comment; an edit recorded before knew no one but its author
_MIGRATE_2_TO_3 = ("ALTER TABLE comments ADD COLUMN edited_by TEXT",)
# version 3 -> 4: a pull request's head; one created before is its own repository's
_HEAD_COLUMNS = ("head_repo TEXT", "head_sha TEXT NOT NULL DEFAULT ''")  # head_repo NULL: the item's own
_MIGRATE_3_TO_4 = tuple(f"ALTER TABLE items ADD COLUMN {column}" for column in _HEAD_COLUMNS)
# version 4 -> 5: who holds which role on a repository (its GitHub-like collaborators); a login not
# in it is no collaborator
_COLLABORATORS = (
    "CREATE TABLE IF NOT EXISTS collaborators (repo TEXT NOT NULL, login TEXT NOT NULL, permission TEXT NOT NULL,"
    " PRIMARY KEY (repo, login))"
)
_MIGRATE_4_TO_5 = (_COLLABORATORS,)
SANDBOX_SCHEMA = Schema(
    label="sandbox tracker",
    version=5,
    tables=(
        "CREATE TABLE IF NOT EXISTS items (repo TEXT NOT NULL, number INTEGER NOT NULL, item TEXT NOT NULL UNIQUE,"
        " title TEXT NOT NULL, body TEXT NOT NULL, author TEXT, labels TEXT NOT NULL, kind TEXT NOT NULL,"
        " state TEXT NOT NULL, created_at TEXT NOT NULL DEFAULT '', "
        + ", ".join(_HEAD_COLUMNS)
        + ", PRIMARY KEY (repo, number))",
        # one sequence for the whole file: the comment id, and the cursor is the last one seen
        "CREATE TABLE IF NOT EXISTS comments (seq INTEGER PRIMARY KEY AUTOINCREMENT, item TEXT NOT NULL,"
        " repo TEXT NOT NULL, author TEXT, body TEXT NOT NULL, created_at TEXT NOT NULL, kind TEXT NOT NULL,"
        " path TEXT, line INTEGER, updated_at TEXT, edited_by TEXT)",
        "CREATE INDEX IF NOT EXISTS comments_by_repo ON comments (repo, seq)",
        "CREATE TABLE IF NOT EXISTS reactions (comment_id TEXT NOT NULL, reaction TEXT NOT NULL)",
        _LABELLED,
        _COLLABORATORS,
    ),
    migrations=(_MIGRATE_1_TO_2, _MIGRATE_2_TO_3, _MIGRATE_3_TO_4, _MIGRATE_4_TO_5),
)


@dataclass(frozen=True, slots=True)
class SandboxEntry:
    """One sandbox work item and where it stands."""

    item: WorkItem
    state: ItemState


def item_url(ref: WorkItemRef) -> str:
    # not a web address: the sandbox has none, and a fake github.com link would mislead
    return f"sandbox:{ref}"


def work_item_from_row(row: sqlite3.Row) -> WorkItem:
    ref = WorkItemRef.parse(row["item"])
    return WorkItem(
        ref=ref,
        title=row["title"],
        author=row["author"],
        labels=frozenset(json.loads(row["labels"])),
        kind=ItemKind(row["kind"]),
        body=row["body"],
        url=item_url(ref),
        created_at=datetime.fromisoformat(row["created_at"]) if row["created_at"] else None,
    )


def comment_from_row(row: sqlite3.Row) -> Comment:
    ref = WorkItemRef.parse(row["item"])
    edited = row["updated_at"] is not None and row["updated_at"] != row["created_at"]
    return Comment(
        id=str(row["seq"]),
        item=ref,
        author=row["author"],
        body=row["body"],
        created_at=datetime.fromisoformat(row["created_at"]),
        url=f"{item_url(ref)}/comments/{row['seq']}",
        kind=CommentKind(row["kind"]),
        path=row["path"],
        line=row["line"],
        edited=edited,
        editor=(row["edited_by"] or row["author"]) if edited else None,
    )


class SandboxDb:
    """One connection, a lock held for each transaction, and sqlite errors as `TrackerError`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = open_checked(path, busy_timeout_seconds=10.0, schema=SANDBOX_SCHEMA)
        self._db.row_factory = sqlite3.Row
        self._lock = threading.RLock()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def tx(self, repo: RepoRef | None) -> Iterator[sqlite3.Connection]:
        # IMMEDIATE: the write lock is taken before reading, so item numbers cannot collide
        with self._lock, self._translated(repo):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def read(self, repo: RepoRef | None, sql: str, *params: Any) -> list[sqlite3.Row]:
        with self._lock, self._translated(repo):
            return self._db.execute(sql, params).fetchall()

    @contextmanager
    def _translated(self, repo: RepoRef | None) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise TrackerError(f"{repo or 'sandbox'}: sandbox {self.path}: {exc}") from exc


def require_item(db: sqlite3.Connection, ref: WorkItemRef) -> None:
    if db.execute("SELECT 1 FROM items WHERE item = ?", (str(ref),)).fetchone() is None:
        raise TrackerError(f"{ref.repo}: {ref} not found in the sandbox")


def label_at(db: sqlite3.Connection, ref: WorkItemRef, labels: tuple[str, ...], at: str) -> None:
    """Record `at` as the latest `labeled` time of each of `labels` on `ref`."""
    db.executemany(
        "INSERT INTO labelled (item, label, at) VALUES (?, ?, ?)"
        " ON CONFLICT (item, label) DO UPDATE SET at = excluded.at",
        [(str(ref), label, at) for label in labels],
    )


def repo_key(repo: RepoRef) -> str:
    return f"{repo.host}/{repo.owner}/{repo.name}"


def number_in(text: str, *, what: str, repo: RepoRef | None) -> int:
    """A comment id or a cursor: the decimal numbers this file issues, nothing else."""
    if not text.isdigit():
        raise TrackerError(f"{repo or 'sandbox'}: {what} {text!r} is not one the sandbox issued")
    return int(text)
