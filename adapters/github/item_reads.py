"""Reads about one work item: when it was armed and its comments since, and one comment as it is now."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from adapters.github import editors, payloads
from adapters.github.client import PAGE, GhClient
from domain.errors import TrackerError
from domain.model import Arming, Comment, CommentKind, ItemKind, WorkItem
from domain.refs import RepoRef, WorkItemRef


def arming(client: GhClient, item: WorkItem, label: str) -> Arming:
    """The latest `labeled` event for `label` (its events, every page), else the item's creation;
    then its issue comments and, for a pull request, its review comments created since then."""
    repo, number, where = item.ref.repo, item.ref.number, str(item.ref.repo)
    events = client.pages(repo, f"repos/{repo.full_name}/issues/{number}/events?{PAGE}")
    armed_at = _labelled_at(events.entries, label, where) or item.created_at or _created_at(client, item.ref)
    since = payloads.format_time(armed_at)
    found = _thread(client, repo, f"repos/{repo.full_name}/issues/{number}/comments?{PAGE}", since,
                    CommentKind.ISSUE_COMMENT)  # fmt: skip
    if item.kind is ItemKind.PULL_REQUEST:
        path = f"repos/{repo.full_name}/pulls/{number}/comments?sort=created&direction=asc&{PAGE}"
        found += _thread(client, repo, path, since, CommentKind.REVIEW_COMMENT)
    # `since` filters on update time: an older comment edited since is not the item's news
    after = {(s.comment.kind, s.comment.id): s for s in found if s.comment.created_at >= armed_at}
    node_ids = {key: s.node_id for key, s in after.items()}
    comments = editors.attribute(client, repo, [s.comment for s in after.values()], node_ids)
    return Arming(armed_at, payloads.oldest_first(comments))


def one_comment(client: GhClient, item: WorkItemRef, comment_id: str, kind: CommentKind) -> Comment | None:
    """The comment as it is now; None when GitHub answers 404 (deleted) or it is another item's."""
    repo, where = item.repo, str(item.repo)
    if not comment_id.isdigit():
        raise TrackerError(f"{where}: cannot read comment id {comment_id!r}")
    endpoint = "pulls" if kind is CommentKind.REVIEW_COMMENT else "issues"
    reply = client.send(repo, "GET", f"repos/{repo.full_name}/{endpoint}/comments/{comment_id}", absent_ok=True)
    if reply.status == 404:
        return None
    raw = reply.json(where)
    if not isinstance(raw, dict):
        raise TrackerError(f"{where}: malformed reply for comment {comment_id} (expected an object)")
    found = payloads.comment(repo, raw, kind, where, bot=client.bot_login(str(repo))).comment
    return found if found.item == item else None


def _labelled_at(events: list[dict[str, Any]], label: str, where: str) -> datetime | None:
    try:
        times = [
            payloads.parse_time(str(event["created_at"]))
            for event in events
            if event.get("event") == "labeled" and (event.get("label") or {}).get("name") == label
        ]
    except (KeyError, ValueError, AttributeError) as error:
        raise TrackerError(f"{where}: malformed issue event in the reply ({error!r})") from error
    return max(times, default=None)


def _created_at(client: GhClient, ref: WorkItemRef) -> datetime:
    """Only for an item handed in without its creation time: one more request."""
    reply = client.send(ref.repo, "GET", f"repos/{ref.repo.full_name}/issues/{ref.number}")
    raw = reply.json(str(ref.repo))
    created = payloads.work_item(ref.repo, raw, str(ref.repo)).created_at if isinstance(raw, dict) else None
    if created is None:
        raise TrackerError(f"{ref.repo}: no creation time for {ref} in the reply")
    return created


def _thread(client: GhClient, repo: RepoRef, path: str, since: str, kind: CommentKind) -> list[payloads.Seen]:
    pages = client.since_pages(repo, path, since=since, key="created_at")
    bot = client.bot_login(str(repo))
    return [payloads.comment(repo, raw, kind, str(repo), bot=bot) for raw in pages.entries]
