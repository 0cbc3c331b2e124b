"""GitHub REST JSON to domain values: issues and pull requests, issue and review comments."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from domain.errors import TrackerError
from domain.model import Comment, CommentKind, ItemKind, ItemState, PullHead, WorkItem
from domain.refs import RepoRef, WorkItemRef

_NUMBER_RE = re.compile(r"/([1-9][0-9]*)$")


@dataclass(frozen=True, slots=True)
class Seen:
    """A comment from a stream, with the update time the stream's `since` filters on."""

    comment: Comment
    updated_at: datetime
    node_id: str = ""  # GraphQL's id: who edited it is asked there (`adapters/github/editors.py`)


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def format_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def as_list(page: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(page, list) or not all(isinstance(entry, dict) for entry in page):
        raise TrackerError(f"{where}: malformed reply (expected a JSON array of objects)")
    return page


def work_item(repo: RepoRef, raw: dict[str, Any], where: str) -> WorkItem:
    try:
        kind = ItemKind.PULL_REQUEST if raw.get("pull_request") else ItemKind.ISSUE
        return WorkItem(
            ref=WorkItemRef(repo, int(raw["number"])),
            title=str(raw.get("title") or ""),
            author=_login(raw),
            labels=frozenset(str(label["name"]) for label in raw.get("labels") or ()),
            kind=kind,
            body=str(raw.get("body") or ""),
            url=str(raw.get("html_url") or ""),
            created_at=parse_time(str(raw["created_at"])) if raw.get("created_at") else None,
        )
    except (KeyError, TypeError, ValueError) as error:
        raise TrackerError(f"{where}: malformed issue in the reply ({error!r})") from error


def pull_head(raw: dict[str, Any], where: str) -> PullHead:
    """A pull request's head as GitHub gives it: `head.repo` null when the fork was deleted; a
    fork when that repository is not the base's (names compared as GitHub does, ignoring case)."""
    try:
        head, base = raw["head"], raw["base"]["repo"]["full_name"]
        name = str(head["repo"]["full_name"]) if head.get("repo") else ""
        return PullHead(name, str(head["sha"]), fork=not name or name.lower() != str(base).lower())
    except (KeyError, TypeError, AttributeError) as error:
        raise TrackerError(f"{where}: malformed pull request in the reply ({error!r})") from error


def item_state(raw: dict[str, Any], label: str, where: str) -> ItemState:
    item = work_item(RepoRef("-", "-", "-"), raw, where)
    if raw.get("state") == "closed":
        merged = (raw.get("pull_request") or {}).get("merged_at")
        return ItemState.MERGED if merged else ItemState.CLOSED
    return ItemState.OPEN if label in item.labels else ItemState.UNLABELED


def updated_at(raw: dict[str, Any], where: str) -> datetime:
    try:
        return parse_time(str(raw["updated_at"]))
    except (KeyError, ValueError) as error:
        raise TrackerError(f"{where}: malformed issue in the reply ({error!r})") from error


def comment(repo: RepoRef, raw: dict[str, Any], kind: CommentKind, where: str, *, bot: str | None = None) -> Seen:
    """A comment of `kind`, as REST gives it: `edited` when its update time is not its creation
    time (REST does not say who edited it, GraphQL does; the same second as its creation cannot be
    told); `by_us` when `bot`, the login the-loop posts as, wrote it (logins compared as GitHub does,
    ignoring case)."""
    parent = "pull_request_url" if kind is CommentKind.REVIEW_COMMENT else "issue_url"
    try:
        number = _NUMBER_RE.search(str(raw[parent]))
        if number is None:
            raise ValueError(f"no item number in {parent}")
        line = raw.get("line") or raw.get("original_line")
        author = _login(raw)
        created = parse_time(str(raw["created_at"]))
        updated = parse_time(str(raw.get("updated_at") or raw["created_at"]))
        found = Comment(
            id=str(int(raw["id"])),
            item=WorkItemRef(repo, int(number.group(1))),
            author=author,
            body=str(raw.get("body") or ""),
            created_at=created,
            url=str(raw.get("html_url") or ""),
            kind=kind,
            path=str(raw["path"]) if raw.get("path") else None,
            line=int(line) if line else None,
            edited=updated != created,
            by_us=bot is not None and author is not None and author.lower() == bot.lower(),
        )
        return Seen(found, updated, str(raw.get("node_id") or ""))
    except (KeyError, TypeError, ValueError) as error:
        raise TrackerError(f"{where}: malformed comment in the reply ({error!r})") from error


def oldest_first(comments: list[Comment]) -> tuple[Comment, ...]:
    return tuple(sorted(comments, key=lambda c: (c.created_at, c.kind.value, int(c.id))))


def _login(raw: dict[str, Any]) -> str | None:
    user = raw.get("user")
    login = user.get("login") if isinstance(user, dict) else None
    return str(login) if login else None
