"""The sandbox tracker as the CLI uses it, and its contents shown as a table or JSON lines."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from app.cli.events_view import _visible as visible  # the one escaper of untrusted text for a terminal
from domain.model import Comment, ItemKind, ItemState, Reaction, WorkItem
from domain.refs import RepoRef, WorkItemRef

_BODY_MAX = 72


class SandboxEntry(Protocol):
    @property
    def item(self) -> WorkItem: ...

    @property
    def state(self) -> ItemState: ...


class SandboxAdmin(Protocol):
    """The sandbox tracker's own methods beside `TrackerPort` (`provider: sandbox`).

    Failure modes: `TrackerError` naming the repository for an unknown item, a number already
    taken, or a database error; `StateError` naming the file when it is unreadable or corrupt.
    """

    login: str  # the author of what the-loop itself posts (its notices)

    def create_item(
        self,
        repo: RepoRef,
        title: str,
        body: str = "",
        *,
        author: str | None = ...,
        labels: tuple[str, ...] = (),
        kind: ItemKind = ...,
        number: int | None = None,
    ) -> WorkItemRef: ...

    def add_comment(self, ref: WorkItemRef, body: str, author: str | None = ...) -> Comment: ...

    def close_item(self, ref: WorkItemRef, state: ItemState = ...) -> None: ...

    def list_items(self) -> Sequence[SandboxEntry]: ...

    def comments(self, ref: WorkItemRef) -> list[Comment]: ...

    def reactions(self) -> list[tuple[str, Reaction]]: ...


def entry_record(
    entry: SandboxEntry, comments: Sequence[Comment], reactions: dict[str, list[str]], login: str
) -> dict[str, Any]:
    """One item as a JSON object: its comments, and apart from them what the-loop posted."""
    item = entry.item

    def one(comment: Comment) -> dict[str, Any]:
        return {
            "id": comment.id,
            "author": comment.author,
            "created_at": comment.created_at.isoformat(),
            "body": comment.body,
            "reactions": reactions.get(comment.id, []),
        }

    return {
        "work_item": str(item.ref),
        "state": entry.state.value,
        "kind": item.kind.value,
        "title": item.title,
        "author": item.author,
        "labels": sorted(item.labels),
        "comments": [one(c) for c in comments if c.author != login],
        "posted": [one(c) for c in comments if c.author == login],
    }


def entry_lines(record: dict[str, Any]) -> list[str]:
    """One item for a person: a heading line, then one indented line per comment, every
    untrusted field escaped so no control character reaches the terminal."""
    labels = ",".join(record["labels"]) or "-"
    head = f"{record['work_item']}  {record['state']}  [{visible(labels)}]  by {visible(str(record['author']))}"
    lines = [f"{head}  {_short(record['title'])}"]
    for tag, comments in (("", record["comments"]), ("notice ", record["posted"])):
        for comment in comments:
            marks = f" ({','.join(comment['reactions'])})" if comment["reactions"] else ""
            who = visible(str(comment["author"]))
            lines.append(f"  #{comment['id']} {tag}{who}{marks}: {_short(comment['body'])}")
    return lines


def _short(text: str) -> str:
    shown = visible(text)
    return shown if len(shown) <= _BODY_MAX else shown[: _BODY_MAX - 1] + "…"
