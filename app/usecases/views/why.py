"""`the-loop why`: one comment's story, from its item's ledger and the events that name it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.usecases.cluster.slot_wait import waits
from domain.events import for_commands
from domain.fleet import ItemStatus
from domain.holds import HeldBy, Hold, TurnFailed, hold, turn_failed
from domain.item_facts import held_of
from domain.ledger import Ledger, Pending, Resolved
from domain.ports import StateStore
from domain.pricing import dollars
from domain.refs import WorkItemRef
from domain.spending import TurnCost
from domain.story import Record, names, verdict


@dataclass(frozen=True, slots=True)
class Story:
    comment_id: str
    item: WorkItemRef | None
    verdict: str
    events: list[Record]
    resolved: Resolved | None = None
    pending: Pending | None = None
    held: Hold | None = None  # what holds it, while it waits
    turn_failed: TurnFailed | None = None  # delivered, and its turn then failed on the API
    item_state: ItemStatus | None = None  # its item's state as the store says it (None: nothing holds it)
    cost: TurnCost | None = None  # what its turn cost, once its end was read

    @property
    def cost_line(self) -> str | None:
        """`its turn cost: 1,000 in, 200 out, 0 cache write, 3,000 cache read (claude-x): $0.0069 estimated`."""
        cost = self.cost
        if cost is None:
            return None
        if cost.usage is None:
            return "its turn cost: unknown (its agent's records did not say; see session.turn_finished)"
        u = cost.usage
        money = (
            f": {dollars(cost.micro_dollars)} estimated"
            if cost.micro_dollars is not None
            else " (no price: tokens only)"
        )
        model = f" ({u.model})" if u.model else ""
        return (
            f"its turn cost: {u.input:,} in, {u.output:,} out, {u.cache_write:,} cache write, "
            f"{u.cache_read:,} cache read{model}{money}"
        )

    def as_json(self) -> dict[str, Any]:
        ledger: dict[str, Any] | None = None
        if self.resolved is not None:
            r = self.resolved
            ledger = {"resolution": r.kind.value, "reason": r.reason, "at": r.at.isoformat(), "attempts": r.attempts}
        elif self.pending is not None:
            ledger = {"pending": self.pending.state.value, "attempts": self.pending.attempts}
        return {
            "comment_id": self.comment_id,
            "work_item": str(self.item) if self.item else None,
            "verdict": self.verdict,
            "ledger": ledger,
            "held": self.held.as_json() if self.held is not None and self.resolved is None else None,
            "turn_failed": self.turn_failed.as_json() if self.turn_failed is not None else None,
            "item_state": self.item_state.as_json() if self.item_state is not None else None,
            "cost": _cost_json(self.cost),
            "events": self.events,
        }


def comment_story(
    store: StateStore | None, comment_id: str, *, item: WorkItemRef | None, records: Iterable[Record]
) -> Story | None:
    """The story of `comment_id` (on `item`, when known); None when neither the ledger nor the
    event log knows it."""
    events: list[Record] = [for_commands(r) for r in records if names(r, comment_id)]
    if item is not None and not any(r.get("work_item") in {None, str(item)} for r in events):
        events = []  # an id of another item's comment: not this one
    ledger = _ledger_of(store, comment_id, item) if store is not None else None
    kept = _kept_for(store, comment_id, item) if store is not None and ledger is None else None
    if ledger is None and not events and kept is None:
        return None
    resolved = ledger.resolved.get(comment_id) if ledger else None
    pending = ledger.pending_entry(comment_id) if ledger else None
    if item is None:
        item = ledger.item if ledger else kept or _item_of(events)
    record = store.session(item) if store is not None and item is not None else None
    slot = _slot_since(store, item) if store is not None and item is not None else None
    held = hold(ledger, record, slot_since=slot) if ledger and pending else None
    if kept is not None and slot is not None:
        held = Hold(by=HeldBy.SLOT, since=slot)  # its item's worker takes it once the item has a slot
    failed = turn_failed(comment_id, record, events) if resolved is not None else None
    said = verdict(resolved, pending, events, held=held, failed=failed, kept=kept is not None)
    shows = held_of(record, store.ledger(item), slot_since=slot) if store is not None and item is not None else None
    cost = _cost_of(store, comment_id, item) if store is not None and item is not None and resolved else None
    return Story(comment_id, item, said, events, resolved, pending, held, failed, shows, cost)


def _cost_of(store: StateStore, comment_id: str, item: WorkItemRef) -> TurnCost | None:
    return next((cost for cost in store.costs(item=item) if cost.comment_id == comment_id), None)


def _cost_json(cost: TurnCost | None) -> dict[str, Any] | None:
    if cost is None:
        return None
    if cost.usage is None:
        return {"usage": "unknown"}
    u = cost.usage
    money = None if cost.micro_dollars is None else cost.micro_dollars / 1_000_000
    return {
        "tokens_in": u.input,
        "tokens_out": u.output,
        "cache_write": u.cache_write,
        "cache_read": u.cache_read,
        "model": u.model,
        "usd_estimated": money,
    }


def _kept_for(store: StateStore, comment_id: str, item: WorkItemRef | None) -> WorkItemRef | None:
    """The item the inbox keeps `comment_id` for, not yet taken by its worker; None when it does not."""
    return next((e.item for e in store.inbox_index() if e.comment_id == comment_id and item in {None, e.item}), None)


def _slot_since(store: StateStore, item: WorkItemRef) -> datetime | None:
    """Since when the item waits for a free slot; None when it does not."""
    return next((w.since for w in waits(store.meta()) if w.item == str(item)), None)


def _ledger_of(store: StateStore, comment_id: str, item: WorkItemRef | None) -> Ledger | None:
    for ref in [item] if item is not None else store.items():
        ledger = store.ledger(ref)
        if ledger is not None and (comment_id in ledger.resolved or ledger.pending_entry(comment_id)):
            return ledger
    return None


def _item_of(events: list[Record]) -> WorkItemRef | None:
    for record in events:
        if record.get("work_item"):
            try:
                return WorkItemRef.parse(str(record["work_item"]))
            except ValueError:
                continue
    return None
