"""A work item's intake in one cycle: what its inbox (and, at first sight, the tracker's arming)
brings becomes its ledger — admitted, set aside as history or as edited by someone else, re-armed."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from app.usecases.cycle.authorization import Authorization
from app.usecases.cycle.meta import armed_floor
from app.usecases.unit_of_work import InUnitOfWork, UnitOfWork
from domain.authorize import Authorized, Standing, is_authorized, steering_logins
from domain.control import control_of
from domain.events import Event, Level
from domain.ledger import ASIDE_EDITED, ASIDE_UNAUTHORIZED, Ledger, StartRequest
from domain.model import Arming, Comment, WorkItem
from domain.ports import TrackerPort
from domain.refs import WorkItemRef

# the setting that refused an author, by why: what `rule` says in the event of their comment
REFUSED_BY = {
    Standing.NOT_LISTED: "routing.authorizedUsers",
    Standing.DENIED: "routing.authorize.deny",
    Standing.BELOW: "routing.authorize.permission",
    Standing.UNKNOWN: "routing.authorize.permission",
}


@dataclass(frozen=True, slots=True)
class Listing:
    """How the cycle found an item: the label it carries, whether a session may be spawned for it
    (`spawnOnUnmatched`), and when its repository began to be read (the tracker's clock)."""

    label: str
    armed: bool
    since: datetime | None = None
    history: bool = False  # the repository's first cycle: what the item holds is all history


@dataclass(frozen=True, slots=True)
class IntakeConfig:
    version: str


@dataclass(kw_only=True, eq=False)
class Intake(InUnitOfWork):
    tracker_for: Callable[[WorkItemRef], TrackerPort]
    uow: UnitOfWork
    config: IntakeConfig
    authorization: Authorization  # who may steer: read for the authors of what is taken in, before it is decided
    _rearmed: set[WorkItemRef] = field(init=False, default_factory=set)  # re-arm at most once per run per item

    def ledger(self, item: WorkItem, listing: Listing) -> Ledger:
        """The item's ledger with what its inbox holds taken in (both in one transaction)."""
        kept = self.store.inbox(item.ref)
        self._ours(kept)
        ledger = self.store.ledger(item.ref)
        if ledger is None:
            return self._first_sight(item, listing, kept)
        rearmed = self._rearm(ledger)
        authorized = self._authorized(rearmed, kept)
        admitted = self._set_aside(rearmed.admit(kept, authorized=authorized), kept, authorized)
        if admitted != ledger or kept:  # an idle item costs no write
            return self._take(admitted, kept)
        return ledger

    def _first_sight(self, item: WorkItem, listing: Listing, kept: list[Comment]) -> Ledger:
        """Only what was there before the item was armed (its label) is baselined; what an
        authorized author wrote since is delivered — whether or not it was read yet."""
        if listing.history and listing.since is not None:
            # the streams start at `since`: what they had then was read as history, not asked again
            arming = Arming(listing.since, ())
        else:
            arming = self.tracker_for(item.ref).arming(item, listing.label)
        floors = (arming.armed_at, listing.since, armed_floor(self.store, item.ref))
        armed_at = max(floor for floor in floors if floor is not None)
        now = self.clock.now()
        ledger = Ledger.first_sight(item.ref, now=now, armed_at=armed_at)
        found = [*arming.comments, *kept]
        taken = {c.id for c in kept}  # said already: the arming read and the stream may both bring one
        self._ours(c for c in arming.comments if c.id not in taken)
        author = [(item.ref, item.author)] if listing.armed and item.author else []
        authorized = self._authorized(ledger, found, also=author)
        ledger = self._set_aside(ledger.admit(found, authorized=authorized), found, authorized)
        wanted = listing.armed and is_authorized(item.author, authorized, repo=item.ref.repo)
        if wanted and self.store.session(item.ref) is None:
            ledger = replace(ledger, start=StartRequest("first-sight", now))
        ledger = self._take(ledger, kept)
        self.events.emit(
            Event.POLL_BASELINED, work_item=str(item.ref), armed_at=armed_at.isoformat(), pending=len(ledger.pending)
        )
        return ledger

    def _ours(self, comments: Iterable[Comment]) -> None:
        """A comment skipped as ours is never skipped silently (the marker is only a convention)."""
        for comment in comments:
            if comment.is_ours:
                rule = "login" if comment.by_us else "marker"
                self._emit(Event.POLL_COMMENT_OURS, comment, level=Level.DEBUG, rule=rule)

    def _authorized(
        self, ledger: Ledger, comments: list[Comment], *, also: Iterable[tuple[WorkItemRef, str]] = ()
    ) -> Authorized:
        """The rule with the permission of each author (and editor) of the comments new to `ledger`
        read, where it decides: before the pure rules run on them."""
        return self.authorization.of([*steering_logins(ledger.unknown(comments)), *also])

    def _set_aside(self, ledger: Ledger, comments: list[Comment], authorized: Authorized) -> Ledger:
        """A comment that will never be a prompt is resolved, and said once: history, edited before
        its first read by someone not authorized (whose text is not its author's), or by an author
        not authorized (a control comment of one steers nothing)."""
        ledger, aside = ledger.set_aside(comments, now=self.clock.now(), authorized=authorized)
        for comment, why in aside:
            if why == ASIDE_UNAUTHORIZED:
                self._unauthorized(comment, authorized.standing(comment.author, repo=comment.item.repo))
            elif why == ASIDE_EDITED:
                self._emit(Event.POLL_COMMENT_EDITED_BY_OTHER, comment, level=Level.WARNING, editor=comment.editor)
            else:
                self.events.emit(
                    Event.POLL_COMMENT_HISTORY,
                    work_item=str(ledger.item),
                    comment_id=comment.id,
                    armed_at=ledger.floor.isoformat(),
                )
        return ledger

    def _unauthorized(self, comment: Comment, standing: Standing) -> None:
        rule = REFUSED_BY.get(standing, REFUSED_BY[Standing.NOT_LISTED])
        if control_of(comment.body) is not None:
            self._emit(Event.CONTROL_IGNORED, comment, level=Level.WARNING, rule=rule, standing=standing.value)
        else:
            self._emit(Event.POLL_COMMENT_UNAUTHORIZED, comment, rule=rule, standing=standing.value)

    def _emit(self, event: Event, comment: Comment, *, level: Level = Level.INFO, **fields: Any) -> None:
        """An event about one comment that is not a prompt: its item, its id and its author first."""
        self.events.emit(
            event, level=level, work_item=str(comment.item), comment_id=comment.id, author=comment.author, **fields
        )

    def _take(self, ledger: Ledger, kept: list[Comment]) -> Ledger:
        """The inbox's comments are in the ledger now: both in one transaction."""
        with self.store.transaction():
            saved = self.store.save_ledger(ledger)
            if kept:
                self.store.inbox_remove(ledger.item, [c.id for c in kept])
        return saved

    def _rearm(self, ledger: Ledger) -> Ledger:
        if ledger.item in self._rearmed:
            return ledger
        self._rearmed.add(ledger.item)
        ledger, ids = ledger.rearm(running_version=self.config.version)
        if ids:
            self.events.emit(
                Event.POLL_REARMED, work_item=str(ledger.item), comment_ids=list(ids), version=self.config.version
            )
        return ledger
