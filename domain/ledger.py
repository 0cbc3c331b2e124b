"""The ledger of one work item: which comments are resolved, pending, abandoned — and its rules."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from domain.authorize import Authorized, is_authorized
from domain.model import Comment, CommentKind
from domain.policy import Decision
from domain.refs import WorkItemRef

LEGACY_SKEW = timedelta(minutes=10)
# how far behind a repository's last read (our clock) the pruning horizon stays: the clock skew
# allowance, and room for a tracker that lists a comment a while after it was written
PRUNE_MARGIN = timedelta(hours=1)
ASIDE_HISTORY = "before-armed"  # written before the item was armed: history
ASIDE_EDITED = "edited-by-other"  # edited before its first read by someone not authorized
ASIDE_UNAUTHORIZED = "unauthorized"  # its author may not steer (routing.authorize), or is not known


class Resolution(enum.Enum):
    DELIVERED = "delivered"  # the harness confirmed it
    BASELINED = "baselined"
    SKIPPED = "skipped"
    ABANDONED = "abandoned"
    CONTROL = "control"  # a control comment, executed (never delivered to the agent)


class DeliveryState(enum.Enum):
    """Where a pending comment's delivery stands (the store keeps it, per delivery id)."""

    QUEUED = "queued"  # no attempt yet
    ATTEMPTING = "attempting"  # an attempt is counted and under way (a crash leaves it so)
    PASTED = "pasted"  # pasted, or spawned with it: waiting for the harness to confirm
    UNCONFIRMED = "unconfirmed"  # the harness never confirmed it: a failed attempt
    FAILED = "failed"  # the attempt failed before the prompt went in
    HELD = "held"  # no attempt yet: the item is paused (`the-loop pause`), and that was said once


@dataclass(frozen=True, slots=True)
class Resolved:
    kind: Resolution
    at: datetime
    attempts: int = 0
    version: str = ""
    reason: str = ""
    written: datetime | None = None  # the comment's creation (tracker's clock); None in older ledgers

    @property
    def written_by(self) -> datetime:
        """When the comment was written at the latest: an older entry knows only when it was
        resolved (our clock), so a tracker clock ahead of ours is allowed for."""
        return self.written if self.written is not None else self.at + LEGACY_SKEW


@dataclass(frozen=True, slots=True)
class Pending:
    comment: Comment
    attempts: int = 0
    state: DeliveryState = DeliveryState.QUEUED


@dataclass(frozen=True, slots=True)
class Turn:
    """A delivered comment whose agent turn has not been seen to end, and the spawn that has it."""

    comment_id: str
    kind: CommentKind
    spawn: str
    author: str = ""  # the comment's author, as the tracker gave it: whose comment the turn's cost is ("": a start's)


@dataclass(frozen=True, slots=True)
class StartRequest:
    """A session is wanted before any comment asks for one: the item was armed at first sight, or
    someone wrote `the-loop start`. Attempts count against the same budget as a comment's."""

    reason: str
    requested_at: datetime
    attempts: int = 0
    harness: str = ""  # `the-loop start <harness>`: the item gets this one ("": the routing rules')
    # the item was told it gets `harness`: once, however many cycles its first attempt waits (memory, a budget)
    noticed: bool = False


@dataclass(frozen=True, slots=True)
class Ledger:
    item: WorkItemRef
    baseline_at: datetime
    resolved: Mapping[str, Resolved] = field(default_factory=dict)
    pending: tuple[Pending, ...] = ()
    abandoned: Mapping[str, Comment] = field(default_factory=dict)
    version: int = 0  # of the stored row this was read from (0: never stored); saves compare-and-set on it
    armed_at: datetime | None = None  # the tracker's clock: a comment written before it is never new
    start: StartRequest | None = None
    paused: bool = False  # `the-loop pause`: pending comments wait, no attempt is made
    stopped: bool = False  # `the-loop stop`: later comments are not delivered until `the-loop start`
    turns: tuple[Turn, ...] = ()  # delivered comments whose agent turn has not been seen to end
    horizon: datetime | None = None  # pruned: a comment written before it is history, its id dropped
    # the item was told it has no agent (no rule and no default harness cover it, or its recorded harness
    # is configured no more), once since it last had one
    unrouted_noticed: bool = False

    @classmethod
    def first_sight(
        cls, item: WorkItemRef, *, now: datetime, existing: Iterable[Comment] = (), armed_at: datetime | None = None
    ) -> Ledger:
        """A work item seen for the first time: what it held before it was armed is baselined, not
        delivered. (`armed_at` is the tracker's time of the item's label; the comments written after
        it are left for `admit`.)"""
        ledger = cls(item=item, baseline_at=now, armed_at=armed_at)
        before = ledger.history(existing) if armed_at is not None else list(existing)
        resolved = {
            c.id: Resolved(Resolution.BASELINED, now, reason="first-sight", written=c.created_at) for c in before
        }
        return replace(ledger, resolved=resolved)

    def admit(self, comments: Iterable[Comment], *, authorized: Authorized) -> Ledger:
        """Queue the comments that are new candidates, in order; everything else stays out.

        New is one rule for every ingress (poll stream, webhook, first sight): not resolved or
        pending yet, and written at or after the item was armed — the tracker's clock against the
        tracker's clock (see `floor` for ledgers older than that rule)."""
        known = set(self.resolved) | {p.comment.id for p in self.pending}
        fresh = [
            c
            for c in comments
            if c.item == self.item
            and c.id not in known
            and c.created_at >= self.floor
            and screen(c, authorized=authorized) is Screen.CANDIDATE
        ]
        fresh = sorted({c.id: c for c in fresh}.values(), key=_order)
        return replace(self, pending=self.pending + tuple(Pending(c) for c in fresh))

    @property
    def floor(self) -> datetime:
        """Comments written before this are history. A ledger from before `armed_at` was kept has
        only its first sight, on our clock: a skew allowance keeps a clock behind ours harmless.
        Trackers stamp comments to the whole second while the floor may come from our clock: a
        comment in the arming's own second is new (a prompt too many beats one lost). A pruned
        ledger's horizon raises it: what was written before is no longer known by id."""
        armed = (self.armed_at or self.baseline_at - LEGACY_SKEW).replace(microsecond=0)
        return max(armed, self.horizon) if self.horizon is not None else armed

    def history(self, comments: Iterable[Comment]) -> list[Comment]:
        """Those of `comments` written before the floor: never a prompt, whichever ingress brought them."""
        return [c for c in comments if c.created_at < self.floor]

    def unknown(self, comments: Iterable[Comment]) -> list[Comment]:
        """Those of `comments` this ledger has not resolved or queued, once each, in order: what
        `admit` and `set_aside` decide on."""
        known = set(self.resolved) | {p.comment.id for p in self.pending}
        # below the horizon a comment was resolved once and pruned: known, though not by its id
        pruned = self.horizon or datetime.min.replace(tzinfo=self.baseline_at.tzinfo)
        unknown = {c.id: c for c in comments if c.item == self.item and c.id not in known and c.created_at >= pruned}
        return sorted(unknown.values(), key=_order)

    def set_aside(
        self, comments: Iterable[Comment], *, now: datetime, authorized: Authorized
    ) -> tuple[Ledger, list[tuple[Comment, str]]]:
        """The unknown comments that will never be prompts — an authorized author's history (written
        before the floor), those edited by someone else before their first read, and new ones by an
        author not authorized — resolved, so a second ingress bringing one again (a webhook, then the
        stream) finds it known and it is said once; and why each."""
        aside: list[tuple[Comment, str]] = []
        for comment in self.unknown(comments):
            seen = screen(comment, authorized=authorized)
            if seen is Screen.CANDIDATE and self.history([comment]):
                aside.append((comment, ASIDE_HISTORY))
            elif seen is Screen.EDITED_BY_OTHER:
                aside.append((comment, ASIDE_EDITED))
            elif seen in {Screen.UNAUTHORIZED, Screen.NO_AUTHOR} and not self.history([comment]):
                aside.append((comment, ASIDE_UNAUTHORIZED))
        if not aside:
            return self, []
        kinds = {
            ASIDE_HISTORY: Resolution.BASELINED,
            ASIDE_EDITED: Resolution.SKIPPED,
            ASIDE_UNAUTHORIZED: Resolution.SKIPPED,
        }
        resolved = {c.id: Resolved(kinds[why], now, reason=why, written=c.created_at) for c, why in aside}
        return replace(self, resolved={**self.resolved, **resolved}), aside

    @property
    def next_pending(self) -> Pending | None:
        return self.pending[0] if self.pending else None

    def attempt(self, comment_id: str) -> Ledger:
        """Count one attempt before it is made, so a crash mid-delivery still spends budget."""
        return self._pending(comment_id, lambda p: Pending(p.comment, p.attempts + 1, DeliveryState.ATTEMPTING))

    def mark(self, comment_id: str, state: DeliveryState) -> Ledger:
        return self._pending(comment_id, lambda p: replace(p, state=state))

    def pending_entry(self, comment_id: str) -> Pending | None:
        return next((p for p in self.pending if p.comment.id == comment_id), None)

    def _pending(self, comment_id: str, change: Callable[[Pending], Pending]) -> Ledger:
        return replace(self, pending=tuple(change(p) if p.comment.id == comment_id else p for p in self.pending))

    def attempts(self, comment_id: str) -> int:
        return next((p.attempts for p in self.pending if p.comment.id == comment_id), 0)

    def resolve(
        self, comment_id: str, kind: Resolution, *, at: datetime, version: str = "", reason: str = ""
    ) -> Ledger:
        """Move a pending comment to resolved; an abandoned one is kept for a later re-arm."""
        entry = next((p for p in self.pending if p.comment.id == comment_id), None)
        if entry is None:
            raise KeyError(f"comment {comment_id} is not pending on {self.item}")
        abandoned = dict(self.abandoned)
        if kind is Resolution.ABANDONED:
            abandoned[comment_id] = entry.comment
        return replace(
            self,
            resolved={
                **self.resolved,
                comment_id: Resolved(kind, at, entry.attempts, version, reason, entry.comment.created_at),
            },
            pending=tuple(p for p in self.pending if p.comment.id != comment_id),
            abandoned=abandoned,
        )

    def prune(self, *, before: datetime) -> Ledger:
        """Drop the resolved ids the newness rule no longer needs: those of comments written before
        a horizon at or before `before` (and before every pending comment), which becomes part of
        the floor — such a comment, brought again by any ingress, is history, so it can never be
        delivered again. Abandoned comments keep their entries (a re-arm revives them); the horizon
        never moves back. An entry resolved since the horizon stays as well (what the last while
        resolved can still be looked up). The ledger itself when nothing can be dropped."""
        bound = min((before, *(p.comment.created_at for p in self.pending)))
        # whole seconds, as the floor: nothing dropped may sit in the floor's own second
        horizon = max(bound.replace(microsecond=0), self.horizon or bound.replace(microsecond=0))
        # the last delivery stays too: `the-loop status` names it
        last = max(((e.at, cid) for cid, e in self.resolved.items() if e.kind is Resolution.DELIVERED), default=None)
        keep = {*self.abandoned, *([last[1]] if last else [])}
        # an entry resolved after the horizon stays a while too, whenever its comment was written
        drop = {
            cid
            for cid, entry in self.resolved.items()
            if cid not in keep and entry.written_by < horizon and entry.at < horizon
        }
        if not drop:
            return self
        kept = {cid: entry for cid, entry in self.resolved.items() if cid not in drop}
        return replace(self, resolved=kept, horizon=horizon)

    def budget_spent(self, comment_id: str, *, max_retries: int) -> bool:
        return self.attempts(comment_id) >= max(1, max_retries)

    def turn_open(self, turn: Turn, *, keep: int = 20) -> Ledger:
        return replace(self, turns=(*(t for t in self.turns if t.comment_id != turn.comment_id), turn)[-keep:])

    def turn_closed(self, comment_id: str) -> Ledger:
        return replace(self, turns=tuple(t for t in self.turns if t.comment_id != comment_id))

    def rearm(self, *, running_version: str) -> tuple[Ledger, tuple[str, ...]]:
        """Comments abandoned by a different version get one fresh budget; the same version none."""
        ids = tuple(
            cid
            for cid, comment in self.abandoned.items()
            if self.resolved.get(cid, _NEVER).version not in {running_version, ""}
            and self.resolved[cid].kind is Resolution.ABANDONED
        )
        if not ids:
            return self, ()
        revived = sorted((self.abandoned[cid] for cid in ids), key=_order)
        return (
            replace(
                self,
                resolved={k: v for k, v in self.resolved.items() if k not in ids},
                abandoned={k: v for k, v in self.abandoned.items() if k not in ids},
                pending=tuple(sorted((*self.pending, *(Pending(c) for c in revived)), key=lambda p: _order(p.comment))),
            ),
            ids,
        )


class Screen(enum.Enum):
    """Why a comment is or is not a candidate for delivery."""

    CANDIDATE = "candidate"
    OURS = "ours"  # by the login the-loop writes as, or carrying the agent marker: its notices, the agent's posts
    NO_AUTHOR = "no-author"
    UNAUTHORIZED = "unauthorized"
    EDITED_BY_OTHER = "edited-by-other"  # edited, before it was read, by someone not authorized (or unknown)


def screen(comment: Comment, *, authorized: Authorized) -> Screen:
    repo = comment.item.repo
    if comment.is_ours:
        return Screen.OURS
    if not comment.author:
        return Screen.NO_AUTHOR
    if not is_authorized(comment.author, authorized, repo=repo):
        return Screen.UNAUTHORIZED
    if comment.edited and not is_authorized(comment.editor, authorized, repo=repo):
        return Screen.EDITED_BY_OTHER
    return Screen.CANDIDATE


def _order(comment: Comment) -> tuple[datetime, int, str]:
    numeric = int(comment.id) if comment.id.isdigit() else 0
    return (comment.created_at, numeric, comment.id)


_NEVER = Resolved(Resolution.DELIVERED, datetime.min)


def receipts_wanted(ledger: Ledger | None, *, harness_ended: bool) -> Decision[bool]:
    """Whether an item's receipt folders may still be looked up, and why. A running harness writes
    to its own (and its open turns are read from it); a retry looks them up before it pastes again
    (crash reconciliation: an attempt spent whose outcome was not recorded, until that comment is
    resolved). With neither, nothing reads them again: a later spawn gets a folder of its own, and
    a turn of an ended harness is over."""
    if not harness_ended:
        return Decision(True, "harness-running")
    if ledger is None:
        return Decision(False, "no-ledger")
    if any(p.attempts for p in ledger.pending) or (ledger.start is not None and ledger.start.attempts):
        return Decision(True, "attempt-unsettled")
    return Decision(False, "settled")
