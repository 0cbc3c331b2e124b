"""The sandbox tracker: work items and comments in a local SQLite file, no network at all."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from adapters.sandbox.db import (
    SandboxDb,
    SandboxEntry,
    comment_from_row,
    label_at,
    number_in,
    repo_key,
    require_item,
    work_item_from_row,
)
from domain.authorize import Permission
from domain.errors import TrackerError
from domain.model import (
    Arming,
    Comment,
    CommentBatch,
    CommentKind,
    ItemKind,
    ItemState,
    PullHead,
    RateBudget,
    Reaction,
    WorkItem,
)
from domain.ports import TrackerPort
from domain.refs import RepoRef, WorkItemRef

FILE_NAME = "sandbox.sqlite3"
# the latest moment the file stamped anything (ISO text of one clock, so MAX orders it)
_LATEST = (
    "SELECT MAX(created_at) FROM items UNION ALL SELECT MAX(at) FROM labelled"
    " UNION ALL SELECT MAX(created_at) FROM comments UNION ALL SELECT MAX(updated_at) FROM comments"
)


class SandboxTracker(TrackerPort):
    """A `TrackerPort` over `<state.root>/sandbox.sqlite3`, for demos and tests without GitHub.

    Refs are ordinary (`github:owner/repo#N`); `provider: sandbox` in a source picks this
    adapter. Comment ids are one sequence across the file, so the cursor is the last id seen:
    every comment comes once, oldest first. Its clock is `clock`, never going back (GitHub's does
    not when the machine's is set back): nothing is stamped before the latest stamp in the file,
    so a comment made after the clock was set back is not older than its item's label. An item is labelled when
    `set_labels` adds a label, or at its creation for the labels it is created with, and `arming`
    reads those times; an edit stamps the comment, so one edited before it is read is `edited`.
    A login's `permission` on a repository is what `grant` recorded there, else none: the sandbox
    knows no collaborator by itself (its users steer through `routing.authorizedUsers`).
    The CLI writing while the daemon polls is safe (SQLite WAL, `BEGIN IMMEDIATE`, a busy
    timeout). Failure modes: `StateError` when the file is unreadable, corrupt or cannot be
    migrated (at construction); `TrackerError` naming the repository for an unknown item or
    comment, or a database error.
    """

    def __init__(self, path: Path, *, clock: Callable[[], datetime], login: str = "the-loop") -> None:
        self.path = path
        self.login = login  # author of what `post_comment` writes, as gh's user would be
        self._clock = clock
        self._db = SandboxDb(path)

    def close(self) -> None:
        self._db.close()

    def _now(self, db: sqlite3.Connection | None, repo: RepoRef | None = None) -> str:
        """`clock`, or the latest stamp in the file when the clock reads earlier (it was set back)."""
        rows = db.execute(_LATEST).fetchall() if db is not None else self._db.read(repo, _LATEST)
        return max([self._clock(), *(datetime.fromisoformat(t) for (t,) in rows if t)]).isoformat()

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
        number: int | None = None,
        head_repo: str | None = None,
        head_sha: str = "",
    ) -> WorkItemRef:
        """A new open item: number `number`, or the repository's next one. A pull request's head is
        in `head_repo` (`owner/name`; "": a deleted fork; None: `repo` itself) at `head_sha`."""
        with self._db.tx(repo) as db:
            (last,) = db.execute("SELECT MAX(number) FROM items WHERE repo = ?", (repo_key(repo),)).fetchone()
            ref = WorkItemRef(repo, number or (last or 0) + 1)
            if db.execute("SELECT 1 FROM items WHERE item = ?", (str(ref),)).fetchone():
                raise TrackerError(f"{repo}: {ref} already exists in the sandbox")
            now = self._now(db)
            db.execute(
                "INSERT INTO items (repo, number, item, title, body, author, labels, kind, state, created_at,"
                " head_repo, head_sha) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (repo_key(repo), ref.number, str(ref), title, body, author, json.dumps(sorted(labels)), kind.value,
                 "open", now, head_repo, head_sha),
            )  # fmt: skip
            label_at(db, ref, labels, now)  # an item created with a label is labelled at creation
        return ref

    def add_comment(
        self,
        ref: WorkItemRef,
        body: str,
        author: str | None = "demo",
        *,
        kind: CommentKind = CommentKind.ISSUE_COMMENT,
        path: str | None = None,
        line: int | None = None,
    ) -> Comment:
        with self._db.tx(ref.repo) as db:
            require_item(db, ref)
            cursor = db.execute(
                "INSERT INTO comments (item, repo, author, body, created_at, kind, path, line)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (str(ref), repo_key(ref.repo), author, body, self._now(db), kind.value, path, line),
            )
            row = db.execute("SELECT * FROM comments WHERE seq = ?", (cursor.lastrowid,))
            return comment_from_row(row.fetchone())

    def edit_comment(self, comment_id: str, body: str, *, editor: str | None = None) -> None:
        """An edit (by `editor`, else the author) keeps the comment's id and place in the stream: it
        is never new again; read after it (at a later time than its creation), the comment is
        `edited`, with who edited it."""
        with self._db.tx(None) as db:
            done = db.execute(
                "UPDATE comments SET body = ?, updated_at = ?, edited_by = ? WHERE seq = ?",
                (body, self._now(db), editor, number_in(comment_id, what="comment id", repo=None)),
            )
            if not done.rowcount:
                raise TrackerError(f"sandbox: comment {comment_id} not found")

    def delete_comment(self, comment_id: str) -> None:
        with self._db.tx(None) as db:
            seq = number_in(comment_id, what="comment id", repo=None)
            if not db.execute("DELETE FROM comments WHERE seq = ?", (seq,)).rowcount:
                raise TrackerError(f"sandbox: comment {comment_id} not found")

    def close_item(self, ref: WorkItemRef, state: ItemState = ItemState.CLOSED) -> None:
        with self._db.tx(ref.repo) as db:
            require_item(db, ref)
            db.execute("UPDATE items SET state = ? WHERE item = ?", (state.value, str(ref)))

    def set_labels(self, ref: WorkItemRef, labels: tuple[str, ...]) -> None:
        """The item's labels become `labels`; each one it did not carry is labelled now."""
        with self._db.tx(ref.repo) as db:
            require_item(db, ref)
            (before,) = db.execute("SELECT labels FROM items WHERE item = ?", (str(ref),)).fetchone()
            db.execute("UPDATE items SET labels = ? WHERE item = ?", (json.dumps(sorted(labels)), str(ref)))
            added = set(labels) - set(json.loads(before))
            label_at(db, ref, tuple(added), self._now(db))

    def grant(self, repo: RepoRef, login: str, permission: Permission) -> None:
        """`login` holds `permission` on `repo` (`Permission.NONE`: no longer a collaborator)."""
        with self._db.tx(repo) as db:
            db.execute(
                "INSERT INTO collaborators (repo, login, permission) VALUES (?, ?, ?)"
                " ON CONFLICT (repo, login) DO UPDATE SET permission = excluded.permission",
                (repo_key(repo).casefold(), login.casefold(), permission.value),
            )

    # --- reading it back ---------------------------------------------------------------

    def list_items(self) -> list[SandboxEntry]:
        rows = self._db.read(None, "SELECT * FROM items")
        return sorted((SandboxEntry(work_item_from_row(r), ItemState(r["state"])) for r in rows), key=_by_ref)

    def comments(self, ref: WorkItemRef) -> list[Comment]:
        rows = self._db.read(ref.repo, "SELECT * FROM comments WHERE item = ? ORDER BY seq", str(ref))
        return [comment_from_row(r) for r in rows]

    def reactions(self) -> list[tuple[str, Reaction]]:
        rows = self._db.read(None, "SELECT comment_id, reaction FROM reactions ORDER BY rowid")
        return [(r["comment_id"], Reaction(r["reaction"])) for r in rows]

    def posted(self) -> list[Comment]:
        """What the-loop posted (its notices), oldest first."""
        rows = self._db.read(None, "SELECT * FROM comments WHERE author = ? ORDER BY seq", self.login)
        return [comment_from_row(r) for r in rows]

    # --- TrackerPort -------------------------------------------------------------------

    def work_items(self, repo: RepoRef, label: str) -> list[WorkItem]:
        rows = self._db.read(
            repo, "SELECT * FROM items WHERE repo = ? AND state = 'open' ORDER BY number", repo_key(repo)
        )
        return [item for item in map(work_item_from_row, rows) if label in item.labels]

    def new_comments(self, repo: RepoRef, cursor: str | None) -> CommentBatch:
        (last,) = self._db.read(repo, "SELECT COALESCE(MAX(seq), 0) FROM comments")[0]
        if cursor is None:  # like GitHub's adapter: the stream starts now
            return CommentBatch((), str(last), started_at=datetime.fromisoformat(self._now(None, repo)))
        since = number_in(cursor, what="cursor", repo=repo)
        rows = self._db.read(
            repo,
            "SELECT * FROM comments WHERE repo = ? AND seq > ? AND seq <= ? ORDER BY seq",
            repo_key(repo), since, last,
        )  # fmt: skip
        return CommentBatch(tuple(comment_from_row(r) for r in rows), str(max(last, since)))

    def arming(self, item: WorkItem, label: str) -> Arming:
        ref = item.ref
        rows = self._db.read(ref.repo, "SELECT * FROM items WHERE item = ?", str(ref))
        if not rows:
            raise TrackerError(f"{ref.repo}: {ref} not found in the sandbox")
        labelled = self._db.read(ref.repo, "SELECT at FROM labelled WHERE item = ? AND label = ?", str(ref), label)
        # a file from before labelled times were kept knows neither: armed now, as first sight was
        created = work_item_from_row(rows[0]).created_at
        armed_at = datetime.fromisoformat(labelled[0]["at"]) if labelled else created or self._clock()
        after = [c for c in self.comments(ref) if c.created_at >= armed_at]
        return Arming(armed_at, tuple(sorted(after, key=lambda c: (c.created_at, int(c.id)))))

    def comment(self, item: WorkItemRef, comment_id: str, kind: CommentKind) -> Comment | None:
        seq = number_in(comment_id, what="comment id", repo=item.repo)
        rows = self._db.read(
            item.repo, "SELECT * FROM comments WHERE seq = ? AND item = ? AND kind = ?", seq, str(item), kind.value
        )
        return comment_from_row(rows[0]) if rows else None

    def item_state(self, item: WorkItemRef, label: str) -> ItemState:
        rows = self._db.read(item.repo, "SELECT * FROM items WHERE item = ?", str(item))
        if not rows:
            raise TrackerError(f"{item.repo}: {item} not found in the sandbox")
        state = ItemState(rows[0]["state"])
        if state is ItemState.OPEN and label not in work_item_from_row(rows[0]).labels:
            return ItemState.UNLABELED
        return state

    def pull_head(self, item: WorkItemRef) -> PullHead:
        rows = self._db.read(item.repo, "SELECT kind, head_repo, head_sha FROM items WHERE item = ?", str(item))
        if not rows or rows[0]["kind"] != ItemKind.PULL_REQUEST.value:
            raise TrackerError(f"{item.repo}: no pull request {item} in the sandbox")
        head = rows[0]["head_repo"]
        repo = item.repo.full_name if head is None else str(head)
        return PullHead(repo, rows[0]["head_sha"], fork=repo.lower() != item.repo.full_name.lower() or not repo)

    def permission(self, repo: RepoRef, login: str) -> Permission:
        """What `grant` recorded; a login it never named is no collaborator (`Permission.NONE`)."""
        rows = self._db.read(
            repo, "SELECT permission FROM collaborators WHERE repo = ? AND login = ?",
            repo_key(repo).casefold(), login.casefold(),
        )  # fmt: skip
        return Permission(rows[0]["permission"]) if rows else Permission.NONE

    def react(self, comment: Comment, reaction: Reaction) -> None:
        with self._db.tx(comment.item.repo) as db:
            found = db.execute(
                "SELECT 1 FROM comments WHERE seq = ?",
                (number_in(comment.id, what="comment id", repo=comment.item.repo),),
            )
            if found.fetchone() is None:
                raise TrackerError(f"{comment.item.repo}: comment {comment.id} not found in the sandbox")
            db.execute("INSERT INTO reactions VALUES (?, ?)", (comment.id, reaction.value))

    def post_comment(self, item: WorkItemRef, body: str) -> str:
        return self.add_comment(item, body, author=self.login).id

    def edit_posted(self, item: WorkItemRef, comment_id: str, body: str) -> None:
        if not any(c.id == comment_id and c.author == self.login for c in self.comments(item)):
            raise TrackerError(f"{item.repo}: no comment {comment_id} of ours on {item}")
        self.edit_comment(comment_id, body)

    def min_interval_seconds(self, repo: RepoRef) -> float:
        return 0.0  # a local file asks for no particular pace

    def budget(self, repo: RepoRef) -> RateBudget | None:
        return None  # a local file counts no requests


def _by_ref(entry: SandboxEntry) -> WorkItemRef:
    return entry.item.ref
