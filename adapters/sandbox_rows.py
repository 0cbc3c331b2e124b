"""The sandbox file's tables and how its rows become domain values."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime

from adapters.sqlite_schema import Schema
from domain.model import Comment, ItemKind, ItemState, WorkItem
from domain.refs import WorkItemRef

SANDBOX_SCHEMA = Schema(
    label="sandbox tracker",
    version=1,
    tables=(
        "CREATE TABLE IF NOT EXISTS items (repo TEXT NOT NULL, number INTEGER NOT NULL, item TEXT NOT NULL UNIQUE,"
        " title TEXT NOT NULL, body TEXT NOT NULL, author TEXT, labels TEXT NOT NULL, kind TEXT NOT NULL,"
        " state TEXT NOT NULL, PRIMARY KEY (repo, number))",
        # one sequence for the whole file: the comment id, and the cursor is the last one seen
        "CREATE TABLE IF NOT EXISTS comments (seq INTEGER PRIMARY KEY AUTOINCREMENT, item TEXT NOT NULL,"
        " repo TEXT NOT NULL, author TEXT, body TEXT NOT NULL, created_at TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS comments_by_repo ON comments (repo, seq)",
        "CREATE TABLE IF NOT EXISTS reactions (comment_id TEXT NOT NULL, reaction TEXT NOT NULL)",
    ),
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
    )


def comment_from_row(row: sqlite3.Row) -> Comment:
    ref = WorkItemRef.parse(row["item"])
    return Comment(
        id=str(row["seq"]),
        item=ref,
        author=row["author"],
        body=row["body"],
        created_at=datetime.fromisoformat(row["created_at"]),
        url=f"{item_url(ref)}/comments/{row['seq']}",
    )
