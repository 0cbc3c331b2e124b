"""What a delivery is for: a comment, or the item's start (a session wanted before any comment) —
each with its own prompt, budget and notice, under one delivery machinery."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol

from app.usecases.delivery.spawner import Dispatch
from domain.ledger import DeliveryState, Ledger, Resolution, StartRequest, Turn
from domain.model import Comment, CommentKind, WorkItem
from domain.notice import giveup_notice, start_failed_notice
from domain.prompts import event_prompt, spawn_prompt
from domain.receipts import delivery_tag, receipt_line

START = "start"  # a start's delivery id begins so (and is the id of its turn)


class Subject(Protocol):
    @property
    def key(self) -> str:
        """The comment id, or "start"."""

    @property
    def delivery_id(self) -> str: ...

    @property
    def comment(self) -> Comment | None:
        """What reactions go on."""

    def job(self, item: WorkItem, secret: str) -> Dispatch: ...

    def attempts(self, ledger: Ledger) -> int: ...

    def spend(self, ledger: Ledger) -> Ledger: ...

    def mark(self, ledger: Ledger, state: DeliveryState) -> Ledger: ...

    def delivered(self, ledger: Ledger, *, at: datetime, reason: str, spawn: str) -> Ledger: ...

    def settled(self, ledger: Ledger, kind: Resolution, *, at: datetime, version: str, reason: str) -> Ledger: ...

    def notice(self, *, attempts: int, reason: str) -> str: ...


@dataclass(frozen=True, slots=True)
class CommentSubject:
    comment: Comment

    @property
    def key(self) -> str:
        return self.comment.id

    @property
    def delivery_id(self) -> str:
        return str(self.comment.delivery_id)

    def job(self, item: WorkItem, secret: str) -> Dispatch:
        line = receipt_line(self.delivery_id, delivery_tag(secret, self.delivery_id))
        prompt = event_prompt(self.comment, receipt=line)
        return Dispatch(
            item, prompt, spawn_prompt(item, receipt=line, first=(self.comment, line)), self.delivery_id, line
        )

    def attempts(self, ledger: Ledger) -> int:
        return ledger.attempts(self.comment.id)

    def spend(self, ledger: Ledger) -> Ledger:
        return ledger.attempt(self.comment.id)

    def mark(self, ledger: Ledger, state: DeliveryState) -> Ledger:
        return ledger.mark(self.comment.id, state)

    def delivered(self, ledger: Ledger, *, at: datetime, reason: str, spawn: str) -> Ledger:
        resolved = ledger.resolve(self.comment.id, Resolution.DELIVERED, at=at, reason=reason)
        return resolved.turn_open(Turn(self.comment.id, self.comment.kind, spawn, author=self.comment.author or ""))

    def settled(self, ledger: Ledger, kind: Resolution, *, at: datetime, version: str, reason: str) -> Ledger:
        return ledger.resolve(self.comment.id, kind, at=at, version=version, reason=reason)

    def notice(self, *, attempts: int, reason: str) -> str:
        return giveup_notice(self.comment, attempts=attempts, reason=reason)


@dataclass(frozen=True, slots=True)
class StartSubject:
    """The item's session, started with the spawn prompt alone."""

    item: WorkItem
    request: StartRequest
    comment: Comment | None = None
    key: str = "start"

    @property
    def delivery_id(self) -> str:
        return f"{START}-{self.item.ref.slug}-{int(self.request.requested_at.timestamp())}"

    def job(self, item: WorkItem, secret: str) -> Dispatch:
        line = receipt_line(self.delivery_id, delivery_tag(secret, self.delivery_id))
        prompt = spawn_prompt(item, receipt=line)
        return Dispatch(item, prompt, prompt, self.delivery_id, line, harness=self.request.harness)

    def attempts(self, ledger: Ledger) -> int:
        return ledger.start.attempts if ledger.start else 0

    def spend(self, ledger: Ledger) -> Ledger:
        start = ledger.start or self.request
        return replace(ledger, start=replace(start, attempts=start.attempts + 1))

    def mark(self, ledger: Ledger, state: DeliveryState) -> Ledger:
        return ledger

    def delivered(self, ledger: Ledger, *, at: datetime, reason: str, spawn: str) -> Ledger:
        """Its prompt is a turn too (what it cost counts): opened under its delivery id."""
        return replace(ledger, start=None).turn_open(Turn(self.delivery_id, CommentKind.ISSUE_COMMENT, spawn))

    def settled(self, ledger: Ledger, kind: Resolution, *, at: datetime, version: str, reason: str) -> Ledger:
        return replace(ledger, start=None)

    def notice(self, *, attempts: int, reason: str) -> str:
        return start_failed_notice(self.item.ref, attempts=attempts, reason=reason)
