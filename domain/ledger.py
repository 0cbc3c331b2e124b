"""The ledger of one work item: which comments are resolved, pending, abandoned — and its rules."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime

from domain.model import Comment
from domain.refs import WorkItemRef


class Resolution(enum.Enum):
    DELIVERED = "delivered"
    BASELINED = "baselined"
    SKIPPED = "skipped"
    ABANDONED = "abandoned"


@dataclass(frozen=True, slots=True)
class Resolved:
    kind: Resolution
    at: datetime
    attempts: int = 0
    version: str = ""
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Pending:
    comment: Comment
    attempts: int = 0


@dataclass(frozen=True, slots=True)
class Ledger:
    item: WorkItemRef
    baseline_at: datetime
    resolved: Mapping[str, Resolved] = field(default_factory=dict)
    pending: tuple[Pending, ...] = ()
    abandoned: Mapping[str, Comment] = field(default_factory=dict)
    version: int = 0  # of the stored row this was read from (0: never stored); saves compare-and-set on it

    @classmethod
    def first_sight(cls, item: WorkItemRef, *, now: datetime, existing: Iterable[Comment] = ()) -> Ledger:
        """A work item seen for the first time: what it already holds is baselined, not delivered."""
        resolved = {c.id: Resolved(Resolution.BASELINED, now, reason="first-sight") for c in existing}
        return cls(item=item, baseline_at=now, resolved=resolved)

    def admit(self, comments: Iterable[Comment], *, authorized: frozenset[str]) -> Ledger:
        """Queue the comments that are new candidates, in order; everything else stays out.

        What counts as new is the tracker's cursor, not a clock: comparing a comment's time (the
        tracker's clock) with `baseline_at` (ours) would drop comments whenever ours runs ahead."""
        known = set(self.resolved) | {p.comment.id for p in self.pending}
        fresh = [
            c
            for c in comments
            if c.item == self.item
            and c.id not in known
            and screen(c, authorized=authorized) is Screen.CANDIDATE
        ]
        fresh = sorted({c.id: c for c in fresh}.values(), key=_order)
        return replace(self, pending=self.pending + tuple(Pending(c) for c in fresh))

    @property
    def next_pending(self) -> Pending | None:
        return self.pending[0] if self.pending else None

    def attempt(self, comment_id: str) -> Ledger:
        """Count one attempt before it is made, so a crash mid-delivery still spends budget."""
        return replace(
            self,
            pending=tuple(
                Pending(p.comment, p.attempts + 1) if p.comment.id == comment_id else p for p in self.pending
            ),
        )

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
            resolved={**self.resolved, comment_id: Resolved(kind, at, entry.attempts, version, reason)},
            pending=tuple(p for p in self.pending if p.comment.id != comment_id),
            abandoned=abandoned,
        )

    def budget_spent(self, comment_id: str, *, max_retries: int) -> bool:
        return self.attempts(comment_id) >= max(1, max_retries)

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
    OURS = "ours"  # carries the agent marker
    NO_AUTHOR = "no-author"
    UNAUTHORIZED = "unauthorized"


def screen(comment: Comment, *, authorized: frozenset[str]) -> Screen:
    if comment.is_ours:
        return Screen.OURS
    if not comment.author:
        return Screen.NO_AUTHOR
    return Screen.CANDIDATE if is_authorized(comment.author, authorized) else Screen.UNAUTHORIZED


def is_authorized(login: str | None, authorized: frozenset[str]) -> bool:
    """An empty list authorizes nobody, and no login is nobody; logins compare case-insensitively,
    as GitHub's do."""
    return bool(login) and (login or "").casefold() in {a.casefold() for a in authorized}


def _order(comment: Comment) -> tuple[datetime, int, str]:
    numeric = int(comment.id) if comment.id.isdigit() else 0
    return (comment.created_at, numeric, comment.id)


_NEVER = Resolved(Resolution.DELIVERED, datetime.min)
