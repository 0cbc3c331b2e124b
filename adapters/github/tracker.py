"""`GhTracker`: GitHub through the operator's own `gh`, polled incrementally and conditionally.

Cost model, per repository (N labelled items, one label; every GET carries If-None-Match):
- first `work_items` in a process: the full labelled listing, ceil(N/100) requests; first-ever
  `new_comments` (no cursor): 2 requests (newest issue and review comments) that start both
  streams at the server's now — older comments are history, not new;
- each later cycle: `work_items` asks the issue stream once (`state=all&sort=updated&since=`);
  `new_comments` asks the issue-comment stream once, and the review-comment stream on its first
  call in the process and, after the issue stream showed a pull request changed, until a read
  whose server time is `SETTLE` (60 s) past that update (usually one more, 304, cycle);
- a stream whose reply filled a page moves its `since` to at most `SETTLE` before the server's
  clock: its next request is unconditional (a new URL), then answered 304 again;
- so an idle cycle costs 2 requests per repository, both answered 304, whatever N is;
- `item_state`: 1 request, and only for an item with a session that left the list;
- `react`, `post_comment`: 1 request each.
A second label on the same repository adds one issue-stream request per cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from urllib.parse import quote

from adapters.github import payloads
from adapters.github.client import PER_PAGE, GhClient
from adapters.github.gh import GITHUB_COM
from adapters.github.streams import SETTLE, CommentCursor, LabelledSet, ReviewDue, Window
from domain.errors import TrackerError
from domain.model import Comment, CommentBatch, CommentKind, ItemState, Reaction, WorkItem
from domain.ports import TrackerPort
from domain.refs import RepoRef, WorkItemRef

DEFAULT_REACTIONS = {
    Reaction.STARTED: "eyes",
    Reaction.SUCCEEDED: "hooray",
    Reaction.FAILED: "confused",
}
_PAGE = f"per_page={PER_PAGE}"
_ENDPOINTS = {
    CommentKind.ISSUE_COMMENT: "issues/comments",
    CommentKind.REVIEW_COMMENT: "pulls/comments",
}


class GhTracker(TrackerPort):
    """TrackerPort over `gh api -i`; failures are `TrackerError`s naming repository and cause."""

    def __init__(
        self,
        *,
        binary: str = "gh",
        host: str = GITHUB_COM,
        env: Mapping[str, str] | None = None,
        timeout: float = 60.0,
        clock: Callable[[], float] | None = None,
        reactions: Mapping[Reaction, str] | None = None,
    ) -> None:
        self._client = GhClient(binary=binary, host=host, env=env, timeout=timeout, clock=clock)
        # a reaction the configuration leaves out is not posted at all
        self._reactions = dict(DEFAULT_REACTIONS if reactions is None else reactions)
        self._sets: dict[tuple[RepoRef, str], LabelledSet] = {}
        self._review: dict[RepoRef, ReviewDue] = {}

    def min_interval_seconds(self, repo: RepoRef) -> float:
        """The poll interval GitHub last asked for on this repository (`x-poll-interval`), or 0."""
        return self._client.min_interval_seconds(repo)

    def work_items(self, repo: RepoRef, label: str) -> list[WorkItem]:
        state = self._sets.get((repo, label))
        if state is None:
            state = self._sets[(repo, label)] = self._list(repo, label)
        else:
            self._follow(repo, state)
        return [state.items[n] for n in sorted(state.items)]

    def new_comments(self, repo: RepoRef, cursor: str | None) -> CommentBatch:
        if cursor is None:
            return CommentBatch((), self._start(repo).encode())
        state = CommentCursor.decode(cursor, str(repo))
        issue_new, issue, _ = self._stream(repo, state.issue, CommentKind.ISSUE_COMMENT)
        review_new: list[Comment] = []
        review, due = state.review, self._review.setdefault(repo, ReviewDue())
        if due.due:
            review_new, review, read_at = self._stream(repo, state.review, CommentKind.REVIEW_COMMENT)
            due.read(read_at)
        fresh = sorted(issue_new + review_new, key=lambda c: (c.created_at, c.kind.value, int(c.id)))
        return CommentBatch(tuple(fresh), CommentCursor(issue, review).encode())

    def item_state(self, item: WorkItemRef, label: str) -> ItemState:
        path = f"repos/{item.repo.full_name}/issues/{item.number}"
        reply = self._client.send(item.repo, "GET", path)
        raw = reply.json(str(item.repo))
        if not isinstance(raw, dict):
            raise TrackerError(f"{item.repo}: malformed reply for {item} (expected an object)")
        return payloads.item_state(raw, label, str(item.repo))

    def react(self, comment: Comment, reaction: Reaction) -> None:
        repo = comment.item.repo
        if not comment.id.isdigit():
            raise TrackerError(f"{repo}: cannot react to comment id {comment.id!r}")
        content = self._reactions.get(reaction)
        if content is None:
            return
        kind = "pulls" if comment.kind is CommentKind.REVIEW_COMMENT else "issues"
        path = f"repos/{repo.full_name}/{kind}/comments/{comment.id}/reactions"
        self._client.send(repo, "POST", path, payload={"content": content})

    def post_comment(self, item: WorkItemRef, body: str) -> str:
        path = f"repos/{item.repo.full_name}/issues/{item.number}/comments"
        reply = self._client.send(item.repo, "POST", path, payload={"body": body})
        created = reply.json(str(item.repo))
        return str(created.get("id", "")) if isinstance(created, dict) else ""

    # --- streams -------------------------------------------------------------------------

    def _list(self, repo: RepoRef, label: str) -> LabelledSet:
        query = f"labels={quote(label, safe='')}&state=open&{_PAGE}"
        pages = self._client.pages(repo, f"repos/{repo.full_name}/issues?{query}")
        # the issue stream overlaps the listing: a change listed late is still seen
        state = LabelledSet(label, payloads.format_time(pages.server_time - SETTLE))
        for raw in pages.entries:
            item = payloads.work_item(repo, raw, str(repo))
            if label in item.labels:
                state.items[item.ref.number] = item
        return state

    def _follow(self, repo: RepoRef, state: LabelledSet) -> None:
        query = f"state=all&sort=updated&direction=asc&since={state.since}&{_PAGE}"
        pages = self._client.pages(repo, f"repos/{repo.full_name}/issues?{query}", etag=state.etag)
        if not pages.modified:
            return
        where = str(repo)
        changed = [
            (
                payloads.work_item(repo, raw, where),
                payloads.item_state(raw, state.label, where),
                payloads.updated_at(raw, where),
            )
            for raw in pages.entries
        ]
        pull_request = state.absorb(
            changed, etag=pages.etag, full=pages.full, server_time=pages.server_time
        )
        if pull_request is not None:
            self._review.setdefault(repo, ReviewDue()).pull_request_changed(pull_request)

    def _start(self, repo: RepoRef) -> CommentCursor:
        """Both streams start at the server's now; the newest comments only mark that second."""
        moment: datetime | None = None
        windows = []
        for kind in (CommentKind.ISSUE_COMMENT, CommentKind.REVIEW_COMMENT):
            path = f"repos/{repo.full_name}/{_ENDPOINTS[kind]}?sort=created&direction=desc&{_PAGE}"
            reply = self._client.send(repo, "GET", path)
            moment = moment or self._client.server_now(reply)
            history = payloads.as_list(reply.json(str(repo)), str(repo))
            found = [payloads.comment(repo, raw, kind, str(repo)) for raw in history]
            windows.append(Window.starting(moment, found))
        return CommentCursor(*windows)

    def _stream(
        self, repo: RepoRef, window: Window, kind: CommentKind
    ) -> tuple[list[Comment], Window, datetime]:
        """New comments, the window after them, and the server time of the read."""
        query = f"since={window.since}&sort=created&direction=asc&{_PAGE}"
        path = f"repos/{repo.full_name}/{_ENDPOINTS[kind]}?{query}"
        pages = self._client.pages(repo, path, etag=window.etag)
        if not pages.modified:
            return [], window, pages.server_time
        found = [payloads.comment(repo, raw, kind, str(repo)) for raw in pages.entries]
        fresh, after = window.absorb(found, etag=pages.etag, full=pages.full, server_time=pages.server_time)
        return fresh, after, pages.server_time
