"""Which webhook deliveries are kept: only one that can become a prompt or a control verb is kept
in the inbox and wakes the poller; everything else is answered and dropped."""

from __future__ import annotations

import enum
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from domain.authorize import Authorized, Standing
from domain.installations import Installations
from domain.model import Comment
from domain.policy import Decision
from domain.refs import RepoRef, WorkItemRef

# why a delivery is kept
LISTED = "listed"  # its item was listed at the last read of its repository
LABELLED = "labelled"  # not listed yet, but GitHub says it carries a watched label: the label race
# why it is dropped
UNWATCHED = "unwatched"
OTHER_HOST = "other-host"  # a watched owner/repo, but on another GitHub host than the one watched
OURS = "ours"  # by the login the-loop writes as, or carrying the agent marker: never a prompt
# the GitHub App's delivery names an installation that does not serve its repository: another one
# does, or it was deleted since
INSTALLATION_UNWATCHED = "installation-unwatched"
REPOSITORY_REMOVED = "repository-removed"  # taken from the delivery's installation since
UNAUTHORIZED = "unauthorized"
NOT_LISTED = "not-listed"  # neither listed nor labelled: an item the-loop does not work
INBOX_FULL = "inbox-full"


class Refusal(enum.StrEnum):
    """Why the receiver refused a request before handing it on; the `webhook.refused` event's `reason`."""

    MALFORMED = "malformed"
    BAD_SIGNATURE = "bad-signature"  # unsigned, or signed with another secret
    NOT_POST = "not-post"
    TIMEOUT = "timeout"  # not sent whole in time
    NO_LENGTH = "no-length"
    TOO_LARGE = "too-large"
    HEAD_TOO_LARGE = "head-too-large"
    TOO_MANY_CONNECTIONS = "too-many-connections"


@dataclass(frozen=True, slots=True)
class Pushed:
    """A new comment a signed delivery announced, with the labels its item carries as the
    delivery (GitHub, under the shared secret) says, and the installation it came through when the
    GitHub App's webhook delivered it (None: a repository's or organization's webhook)."""

    comment: Comment
    labels: frozenset[str] = frozenset()
    installation: int | None = None


@dataclass(frozen=True, slots=True)
class InboxEntry:
    """One comment kept in the inbox, without its text: what bounding and pruning need."""

    item: WorkItemRef
    comment_id: str
    created_at: datetime
    size: int  # bytes kept for it


@dataclass(frozen=True, slots=True)
class InboxLimits:
    """How full the inbox may be when a webhook adds a comment to it. What polling adds is not
    bounded here: only comments of listed items, taken by their worker in the same cycle."""

    max_comments: int = 1000
    max_bytes: int = 16 * 1024 * 1024


def sender_decision(
    pushed: Pushed, *, watched: Mapping[RepoRef, frozenset[str]], authorized: Authorized
) -> Decision[bool]:
    """Where it comes from and who wrote it; decided from the delivery and the permissions known."""
    comment = pushed.comment
    repo = comment.item.repo
    if repo not in watched:
        if any(other.full_name == repo.full_name for other in watched):
            return Decision(False, OTHER_HOST)
        return Decision(False, UNWATCHED)
    if comment.is_ours:
        return Decision(False, OURS)
    standing = authorized.standing(comment.author, repo=repo)
    # a permission not known yet is asked by the intake, which says once what it decided
    if not standing.steers and standing is not Standing.UNKNOWN:
        return Decision(False, UNAUTHORIZED)
    return Decision(True, "sender")


def installation_decision(pushed: Pushed, *, known: Installations) -> Decision[bool]:
    """Whether the GitHub App's delivery came through the installation that serves its (watched)
    repository. One whose repository's installation is not known yet is taken at its word: only
    GitHub holds the App's webhook secret, and its first call looks the installation up anyway."""
    installation, repo = pushed.installation, pushed.comment.item.repo
    if installation is None:
        return Decision(True, "not the App's")
    if installation in known.gone:
        return Decision(False, INSTALLATION_UNWATCHED)
    serving = known.serving(repo)
    if serving is None and known.taken_from(repo) == installation:
        return Decision(False, REPOSITORY_REMOVED)
    if serving is not None and serving != installation:
        return Decision(False, INSTALLATION_UNWATCHED)
    return Decision(True, "installation")


def keep_decision(pushed: Pushed, *, labels: frozenset[str], listed: bool, room: bool) -> Decision[bool]:
    """Whether a delivery from an admissible sender is kept: its item is worked (listed at the last
    read, or labelled with one of the repository's watched `labels` and not listed yet), and the
    inbox has room."""
    if not listed and not (pushed.labels & labels):
        return Decision(False, NOT_LISTED)
    if not room:
        return Decision(False, INBOX_FULL)
    return Decision(True, LISTED if listed else LABELLED)


def has_room(entries: Iterable[InboxEntry], *, adding: int, limits: InboxLimits) -> bool:
    """Whether one more comment of `adding` bytes keeps the inbox within its limits."""
    kept = list(entries)
    return len(kept) < limits.max_comments and sum(e.size for e in kept) + adding <= limits.max_bytes


def unlisted_stale(
    entries: Iterable[InboxEntry], *, repo: RepoRef, listed: Collection[WorkItemRef], before: datetime
) -> list[InboxEntry]:
    """The comments of `repo`'s items that a read did not list, written before `before`: dropped.
    None is lost: when its item is listed later, the arming read brings every comment since its label."""
    return [e for e in entries if e.item.repo == repo and e.item not in listed and e.created_at < before]
