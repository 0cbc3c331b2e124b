"""`GhTracker`: GitHub through `gh` (the operator's login, or a GitHub App's installation tokens),
polled incrementally and conditionally.

Cost model, per repository (N labelled items, one label; every GET carries If-None-Match):
- first `work_items` with no listing state (none kept, or its file missing or unusable): the full
  labelled listing, ceil(N/100) requests; first-ever `new_comments` (no cursor): 2 requests
  (newest issue and review comments) that start both streams at the server's now — older
  comments are history, not new;
- each later cycle, in this process or a later one reading the listing state from `state_dir`:
  `work_items` asks the issue stream once (`state=all&sort=updated&since=`); `new_comments` asks
  the issue-comment stream once, and the review-comment stream after a fresh listing and, after
  the issue stream showed a pull request changed, until a read whose server time is `SETTLE`
  (60 s) past that update (usually one more, 304, cycle) — and always when the cursor it is given
  has no record of such a read;
- a stream whose reply filled a page moves its `since` to at most `SETTLE` before the server's
  clock: its next request is unconditional (a new URL), then answered 304 again;
- so an idle cycle costs 2 requests per repository, both answered 304, whatever N is — also for
  `poll --once` from cron, each run a new process;
- `arming`: once per newly seen item, its events (ceil(E/100) requests for E events), its issue
  comments since it was armed (usually 1), and for a pull request its review comments (usually
  1); one more only for an item handed in without its creation time and no `labeled` event;
- `comment`, `item_state` (only for an item with a session that left the list), `react`,
  `post_comment`, `edit_posted`, `permission` (a login's role; the caller keeps it a while): 1 request each;
- as a GitHub App, once per process: `GET /app`, the App's slug, whose bot login tells its own comments.
A second label on the same repository adds one issue-stream request per cycle. A listing read
over several pages moves `since` from page to page rather than counting pages (see
`GhClient.since_pages`): a page that fills up costs the same, plus the overlap of one second.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Unpack
from urllib.parse import quote

from adapters.github import editors, item_reads, payloads, permissions
from adapters.github.app_auth import AppInstallations, GitHubApp
from adapters.github.client import PAGE, GhClient
from adapters.github.gh import GhOptions
from adapters.github.listing import LabelledSet, Listing
from adapters.github.listing_file import ListingFiles
from adapters.github.streams import SETTLE, CommentCursor, Window
from domain.authorize import Permission
from domain.errors import TrackerError
from domain.model import (
    Arming,
    Comment,
    CommentBatch,
    CommentKind,
    ItemState,
    PullHead,
    RateBudget,
    Reaction,
    WorkItem,
)
from domain.ports import TrackerPort
from domain.refs import RepoRef, WorkItemRef

DEFAULT_REACTIONS = {
    Reaction.STARTED: "eyes",
    Reaction.SUCCEEDED: "hooray",
    Reaction.FAILED: "confused",
}
_ENDPOINTS = {
    CommentKind.ISSUE_COMMENT: "issues/comments",
    CommentKind.REVIEW_COMMENT: "pulls/comments",
}


class GhTracker(TrackerPort):
    """TrackerPort over `gh api -i`; failures are `TrackerError`s naming repository and cause.
    With `state_dir`, each repository's listing state is kept there between processes."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] | None = None,
        monotonic: Callable[[], float] | None = None,
        reactions: Mapping[Reaction, str] | None = None,
        state_dir: Path | None = None,
        app: GitHubApp | None = None,  # None: gh's own login
        **gh: Unpack[GhOptions],  # how `gh` is run: its binary, host, environment and timeout
    ) -> None:
        self._client = GhClient(clock=clock, monotonic=monotonic, app=app, **gh)
        # a reaction the configuration leaves out is not posted at all
        self._reactions = dict(DEFAULT_REACTIONS if reactions is None else reactions)
        self._files = ListingFiles(state_dir)
        self._listings: dict[RepoRef, Listing] = {}

    @property
    def app_installations(self) -> AppInstallations | None:
        """The GitHub App's installations this tracker acts through; None as gh's own login."""
        return self._client.app

    def token_env(self, repo: RepoRef, *, refused: Mapping[str, str] | None = None) -> dict[str, str] | None:
        """The environment git's fetches of `repo` run in as a GitHub App (`GhClient.token_env`;
        `refused`: one whose token GitHub refused); None with gh's own login. A failure is a
        `TrackerError` naming the repository."""
        return self._client.token_env(repo, refused=refused)

    def forget_listings(self, watched: Iterable[RepoRef]) -> list[Path]:
        """The kept listings of repositories no longer watched are deleted; which ones."""
        return self._files.forget_except(watched)

    def bot_login(self) -> str | None:
        """The login the-loop's comments and reactions are posted as when it acts as a GitHub App
        (`<slug>[bot]`, asked once per process); None with gh's own login, a person's."""
        return self._client.bot_login(f"{self._client.host}: GitHub App")

    def min_interval_seconds(self, repo: RepoRef) -> float:
        """The poll interval GitHub last asked for on this repository (`x-poll-interval`), or 0."""
        return self._client.min_interval_seconds(repo)

    def budget(self, repo: RepoRef) -> RateBudget | None:
        """GitHub's rate-limit budget `repo`'s calls count against (the host's, or in App mode its
        installation's) as the last reply said it; asks nothing."""
        return self._client.budget(repo) if repo.host == self._client.host else None

    def work_items(self, repo: RepoRef, label: str) -> list[WorkItem]:
        listing = self._listing(repo) or self._listings.setdefault(repo, Listing())
        state = listing.sets.get(label)
        if state is None:
            state = listing.sets[label] = self._list(repo, label, listing)
            changed = True
        else:
            changed = self._follow(repo, state, listing)
        if changed:
            self._files.save(repo, listing)
        return [state.items[n] for n in sorted(state.items)]

    def new_comments(self, repo: RepoRef, cursor: str | None) -> CommentBatch:
        if cursor is None:
            started, moment = self._start(repo)
            return CommentBatch((), started.encode(), started_at=moment)
        state = CommentCursor.decode(cursor, str(repo))
        issue_new, issue, _ = self._stream(repo, state.issue, CommentKind.ISSUE_COMMENT)
        review_new: list[Comment] = []
        review, read_at = state.review, state.review_read_at
        listing = self._listing(repo)
        # no listing state at all: nothing says the review stream is settled
        if listing is None or state.review_due(listing.review_until):
            review_new, review, moment = self._stream(repo, state.review, CommentKind.REVIEW_COMMENT)
            read_at = payloads.format_time(moment)
        fresh = payloads.oldest_first(issue_new + review_new)
        return CommentBatch(fresh, CommentCursor(issue, review, read_at).encode())

    def arming(self, item: WorkItem, label: str) -> Arming:
        return item_reads.arming(self._client, item, label)

    def comment(self, item: WorkItemRef, comment_id: str, kind: CommentKind) -> Comment | None:
        return item_reads.one_comment(self._client, item, comment_id, kind)

    def item_state(self, item: WorkItemRef, label: str) -> ItemState:
        path = f"repos/{item.repo.full_name}/issues/{item.number}"
        reply = self._client.send(item.repo, "GET", path)
        raw = reply.json(str(item.repo))
        if not isinstance(raw, dict):
            raise TrackerError(f"{item.repo}: malformed reply for {item} (expected an object)")
        return payloads.item_state(raw, label, str(item.repo))

    def pull_head(self, item: WorkItemRef) -> PullHead:
        reply = self._client.send(item.repo, "GET", f"repos/{item.repo.full_name}/pulls/{item.number}")
        raw = reply.json(str(item.repo))
        if not isinstance(raw, dict):
            raise TrackerError(f"{item.repo}: malformed reply for {item} (expected an object)")
        return payloads.pull_head(raw, str(item.repo))

    def permission(self, repo: RepoRef, login: str) -> Permission:
        return permissions.permission(self._client, repo, login)

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
        if not isinstance(created, dict) or not str(created.get("id", "")).isdigit():
            raise TrackerError(f"{item.repo}: posted on {item}, but the reply names no comment id")
        return str(created["id"])

    def edit_posted(self, item: WorkItemRef, comment_id: str, body: str) -> None:
        if not comment_id.isdigit():
            raise TrackerError(f"{item.repo}: cannot edit comment id {comment_id!r}")
        path = f"repos/{item.repo.full_name}/issues/comments/{comment_id}"
        self._client.send(item.repo, "PATCH", path, payload={"body": body})

    # --- streams -------------------------------------------------------------------------

    def _listing(self, repo: RepoRef) -> Listing | None:
        """This process's listing of `repo`, else the one the last process left, else None."""
        if repo not in self._listings:
            loaded = self._files.load(repo)
            if loaded is None:
                return None
            self._listings[repo] = loaded
        return self._listings[repo]

    def _list(self, repo: RepoRef, label: str, listing: Listing) -> LabelledSet:
        query = f"labels={quote(label, safe='')}&state=open&sort=updated&direction=asc&{PAGE}"
        pages = self._client.since_pages(repo, f"repos/{repo.full_name}/issues?{query}", since=None, key="updated_at")
        # the issue stream overlaps the listing: a change listed late is still seen
        state = LabelledSet(label, payloads.format_time(pages.server_time - SETTLE))
        for raw in pages.entries:
            item = payloads.work_item(repo, raw, str(repo))
            if label in item.labels:
                state.items[item.ref.number] = item
        # what pull requests did before the listing is unknown: read the review stream once past it
        listing.review_due_until(pages.server_time)
        return state

    def _follow(self, repo: RepoRef, state: LabelledSet, listing: Listing) -> bool:
        """Apply the issue stream's changes; False when it had none (a 304)."""
        query = f"state=all&sort=updated&direction=asc&{PAGE}"
        path = f"repos/{repo.full_name}/issues?{query}"
        pages = self._client.since_pages(repo, path, since=state.since, key="updated_at", etag=state.etag)
        if not pages.modified:
            return False
        where = str(repo)
        changed = [
            (
                payloads.work_item(repo, raw, where),
                payloads.item_state(raw, state.label, where),
                payloads.updated_at(raw, where),
            )
            for raw in pages.entries
        ]
        pull_request = state.absorb(changed, etag=pages.etag, full=pages.full, server_time=pages.server_time)
        if pull_request is not None:
            listing.pull_request_changed(pull_request)
        return True

    def _start(self, repo: RepoRef) -> tuple[CommentCursor, datetime]:
        """Both streams start at the server's now; the newest comments only mark that second."""
        moment: datetime | None = None
        windows = []
        for kind in (CommentKind.ISSUE_COMMENT, CommentKind.REVIEW_COMMENT):
            path = f"repos/{repo.full_name}/{_ENDPOINTS[kind]}?sort=created&direction=desc&{PAGE}"
            reply = self._client.send(repo, "GET", path)  # first: a spent budget holds it before anything is asked
            bot = self._client.bot_login(str(repo))  # asked once per process
            moment = moment or self._client.server_now(reply)
            history = payloads.as_list(reply.json(str(repo)), str(repo))
            found = [payloads.comment(repo, raw, kind, str(repo), bot=bot) for raw in history]
            windows.append(Window.starting(moment, found))
        assert moment is not None  # the loop ran
        return CommentCursor(windows[0], windows[1], payloads.format_time(moment)), moment

    def _stream(self, repo: RepoRef, window: Window, kind: CommentKind) -> tuple[list[Comment], Window, datetime]:
        """New comments, the window after them, and the server time of the read."""
        path = f"repos/{repo.full_name}/{_ENDPOINTS[kind]}?sort=created&direction=asc&{PAGE}"
        pages = self._client.since_pages(repo, path, since=window.since, key="created_at", etag=window.etag)
        if not pages.modified:
            return [], window, pages.server_time
        bot = self._client.bot_login(str(repo))
        found = [payloads.comment(repo, raw, kind, str(repo), bot=bot) for raw in pages.entries]
        fresh, after = window.absorb(found, etag=pages.etag, full=pages.full, server_time=pages.server_time)
        node_ids = {(seen.comment.kind, seen.comment.id): seen.node_id for seen in found}
        return editors.attribute(self._client, repo, fresh, node_ids), after, pages.server_time
