"""A stateful in-memory tracker: items, labels, comments, reactions, posts and failure switches."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from domain.authorize import Permission, PermissionKey, permission_key
from domain.errors import RateLimited, TrackerError
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

_EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


@dataclass(slots=True)
class _Item:
    item: WorkItem
    labels: set[str]
    state: ItemState = ItemState.OPEN
    labelled_at: dict[str, datetime] = field(default_factory=dict)  # label -> its latest `labeled`
    head: PullHead | None = None  # a pull request's


@dataclass(slots=True)
class _Stored:
    seq: int
    comment: Comment


@dataclass
class FakeTracker(TrackerPort):
    """What a tracker holds, with switches that make it fail like the real one.

    The comment cursor is the last sequence number seen; an edit keeps its sequence, so an edited
    comment is never new again, and one edited before it is read carries `edited`. With no cursor
    the stream starts now: older comments are history, and the batch says when it started.
    `post_comment` also adds the posted text as a comment by `login`, as GitHub would, and returns
    its id. Its clock is `now` when set, else one that moves a second with each change arranged;
    an item is labelled when a label is added, or at its creation for the labels it starts with.
    `arming` and `comment` cost one request each, as `requests` counts. A login's `permission` is what
    `grant` gave it on the repository, else none (not a collaborator); each lookup is kept in
    `permissions_asked`.
    """

    login: str = "the-loop"
    now: Callable[[], float] | None = None  # the clock; lifts a rate limit once now() >= until
    fail_reads: set[RepoRef] = field(default_factory=set)
    listed_late: set[WorkItemRef] = field(default_factory=set)  # labelled, not yet in the listing
    fail_posts: bool = False
    fail_reactions: bool = False
    rate_limited_until: dict[RepoRef, float] = field(default_factory=dict)
    requests: int = 0
    poll_interval: dict[RepoRef, float] = field(default_factory=dict)
    budget_seen: RateBudget | None = None  # what the host's last reply would have said
    budgets_seen: dict[RepoRef, RateBudget] = field(default_factory=dict)  # a repository's own (its installation's)
    reactions: list[tuple[str, Reaction]] = field(default_factory=list)
    posted: list[tuple[WorkItemRef, str]] = field(default_factory=list)
    fail_permissions: bool = False  # a permission cannot be read (GitHub's 403 to a token without push access)
    permissions_asked: list[tuple[RepoRef, str]] = field(default_factory=list)  # each `permission` lookup
    _roles: dict[PermissionKey, Permission] = field(default_factory=dict)
    _items: dict[WorkItemRef, _Item] = field(default_factory=dict)
    _comments: list[_Stored] = field(default_factory=list)
    _ticks: int = 0
    _seq: int = 0  # never reused, deletions included, as GitHub's ids

    # --- arranging the world -------------------------------------------------------------

    def add_item(
        self,
        ref: WorkItemRef,
        *,
        title: str = "",
        author: str | None = "alice",
        labels: tuple[str, ...] = ("loop",),
        kind: ItemKind = ItemKind.ISSUE,
        body: str = "",
        head: str | None = None,
        sha: str = "",
    ) -> WorkItem:
        """A pull request's head is `sha` in `head` (None: `ref`'s repository; "": a deleted fork)."""
        url = f"https://{ref.repo.host}/{ref.repo.full_name}/issues/{ref.number}"
        title = title or f"item {ref.number}"
        at = self._tick()
        item = WorkItem(ref, title, author, frozenset(labels), kind, body, url, at)
        self._items[ref] = _Item(item, set(labels), labelled_at=dict.fromkeys(labels, at))
        if kind is ItemKind.PULL_REQUEST:
            self.set_head(ref, head, sha)
        return item

    def set_head(self, ref: WorkItemRef, head: str | None, sha: str) -> None:
        """A push to the pull request, or its head moved to another repository."""
        name = ref.repo.full_name if head is None else head
        self._items[ref].head = PullHead(name, sha, fork=not name or name.lower() != ref.repo.full_name.lower())

    def set_state(self, ref: WorkItemRef, state: ItemState) -> None:
        """CLOSED, MERGED or UNLABELED (every label removed) take the item out of `work_items`."""
        entry = self._items[ref]
        if state is ItemState.UNLABELED:
            entry.labels.clear()
            state = ItemState.OPEN
        entry.state = state

    def add_label(self, ref: WorkItemRef, label: str) -> None:
        entry = self._items[ref]
        if label not in entry.labels:
            entry.labels.add(label)
            entry.labelled_at[label] = self._tick()

    def remove_label(self, ref: WorkItemRef, label: str) -> None:
        self._items[ref].labels.discard(label)

    def set_labels(self, ref: WorkItemRef, labels: tuple[str, ...]) -> None:
        """The labels become `labels`: those removed are removed, those added are labelled now."""
        for label in set(self._items[ref].labels) - set(labels):
            self.remove_label(ref, label)
        for label in labels:
            self.add_label(ref, label)

    def add_comment(
        self,
        ref: WorkItemRef,
        body: str,
        *,
        author: str | None = "alice",
        created_at: datetime | None = None,
        comment_id: str | None = None,
        kind: CommentKind = CommentKind.ISSUE_COMMENT,
        path: str | None = None,
        line: int | None = None,
    ) -> Comment:
        self._seq += 1
        seq = self._seq
        cid = comment_id or str(seq)
        anchor = "discussion_r" if kind is CommentKind.REVIEW_COMMENT else "issuecomment-"
        url = f"https://{ref.repo.host}/{ref.repo.full_name}/issues/{ref.number}#{anchor}{cid}"
        at = created_at or self._tick()
        comment = Comment(cid, ref, author, body, at, url, kind, path, line)
        self._comments.append(_Stored(seq, comment))
        return comment

    def edit_comment(self, comment_id: str, body: str, *, editor: str | None = None) -> None:
        """An edit (by `editor`, else the author): same id, same created_at, same place in the
        stream; read later, it is `edited`, with who edited it."""
        for stored in self._comments:
            if stored.comment.id == comment_id:
                by = editor or stored.comment.author
                stored.comment = replace(stored.comment, body=body, edited=True, editor=by)
                return
        raise KeyError(comment_id)

    def delete_comment(self, comment_id: str) -> None:
        self._comments = [s for s in self._comments if s.comment.id != comment_id]

    def grant(self, repo: RepoRef, login: str, permission: Permission) -> None:
        """`login` holds `permission` on `repo` (`Permission.NONE`: removed as a collaborator)."""
        self._roles[permission_key(repo, login)] = permission

    # --- TrackerPort ---------------------------------------------------------------------

    def work_items(self, repo: RepoRef, label: str) -> list[WorkItem]:
        self._request(repo, read=True)
        return [
            replace(entry.item, labels=frozenset(entry.labels))
            for ref, entry in sorted(self._items.items())
            if ref.repo == repo
            and entry.state is ItemState.OPEN
            and label in entry.labels
            and ref not in self.listed_late
        ]

    def new_comments(self, repo: RepoRef, cursor: str | None) -> CommentBatch:
        self._request(repo, read=True)
        last = self._seq
        if cursor is None:
            return CommentBatch((), str(last), started_at=self._time())
        since = int(cursor)
        fresh = tuple(s.comment for s in self._comments if s.seq > since and s.comment.item.repo == repo)
        return CommentBatch(fresh, str(max(last, since)))

    def arming(self, item: WorkItem, label: str) -> Arming:
        self._request(item.ref.repo, read=True)
        entry = self._items.get(item.ref)
        if entry is None:
            raise TrackerError(f"{item.ref.repo}: {item.ref} not found")
        armed_at = entry.labelled_at.get(label) or entry.item.created_at or self._time()
        after = [c for c in self.comments_of(item.ref) if c.created_at >= armed_at]
        return Arming(armed_at, tuple(sorted(after, key=lambda c: c.created_at)))

    def comment(self, item: WorkItemRef, comment_id: str, kind: CommentKind) -> Comment | None:
        self._request(item.repo, read=True)
        found = [c for c in self.comments_of(item) if c.id == comment_id and c.kind is kind]
        return found[0] if found else None

    def item_state(self, item: WorkItemRef, label: str) -> ItemState:
        self._request(item.repo, read=True)
        entry = self._items.get(item)
        if entry is None:
            raise TrackerError(f"{item.repo}: {item} not found")
        if entry.state is not ItemState.OPEN:
            return entry.state
        return ItemState.OPEN if label in entry.labels else ItemState.UNLABELED

    def pull_head(self, item: WorkItemRef) -> PullHead:
        self._request(item.repo, read=True)
        entry = self._items.get(item)
        if entry is None or entry.head is None:
            raise TrackerError(f"{item.repo}: no pull request {item}")
        return entry.head

    def permission(self, repo: RepoRef, login: str) -> Permission:
        self._request(repo, read=True)
        self.permissions_asked.append((repo, login))
        if self.fail_permissions:
            raise TrackerError(f"{repo}: the permission of {login} could not be read (injected 403)")
        return self._roles.get(permission_key(repo, login), Permission.NONE)

    def react(self, comment: Comment, reaction: Reaction) -> None:
        self._request(comment.item.repo, read=False)
        if self.fail_reactions:
            raise TrackerError(f"{comment.item.repo}: reaction on {comment.id} failed (injected)")
        self.reactions.append((comment.id, reaction))

    def post_comment(self, item: WorkItemRef, body: str) -> str:
        self._request(item.repo, read=False)
        if self.fail_posts:
            raise TrackerError(f"{item.repo}: comment on {item} failed (injected)")
        self.posted.append((item, body))
        return self.add_comment(item, body, author=self.login).id

    def edit_posted(self, item: WorkItemRef, comment_id: str, body: str) -> None:
        self._request(item.repo, read=False)
        if self.fail_posts:
            raise TrackerError(f"{item.repo}: editing comment {comment_id} on {item} failed (injected)")
        if not any(c.id == comment_id and c.author == self.login for c in self.comments_of(item)):
            raise TrackerError(f"{item.repo}: no comment {comment_id} of ours on {item}")
        self.edit_comment(comment_id, body)

    def min_interval_seconds(self, repo: RepoRef) -> float:
        return self.poll_interval.get(repo, 0.0)

    def budget(self, repo: RepoRef) -> RateBudget | None:
        return self.budgets_seen.get(repo, self.budget_seen)

    # --- helpers -------------------------------------------------------------------------

    def comments_of(self, ref: WorkItemRef) -> list[Comment]:
        return [s.comment for s in self._comments if s.comment.item == ref]

    def _time(self) -> datetime:
        if self.now is not None:
            return datetime.fromtimestamp(self.now(), UTC)
        return _EPOCH + timedelta(seconds=self._ticks)

    def _tick(self) -> datetime:
        self._ticks += 1
        return self._time()

    def _request(self, repo: RepoRef, *, read: bool) -> None:
        self.requests += 1
        until = self.rate_limited_until.get(repo)
        if until is not None and (self.now is None or self.now() < until):
            message = f"{repo}: rate limited until {until:.0f} (injected)"
            raise RateLimited(message, until_epoch=until)
        if read and repo in self.fail_reads:
            raise TrackerError(f"{repo}: read failed (injected)")
