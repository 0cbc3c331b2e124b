"""`status`'s "needs attention": the items the store says are held — parked, blocked on a request,
paused, stopped, waiting for a slot, a comment given up — each with its state's line, read from the
store alone (what a harness does is `sessions list`'s and the page's to look at)."""

from __future__ import annotations

from app.usecases.cluster.slot_wait import waits
from domain.fleet import ItemStatus, needs_attention
from domain.item_facts import held_of
from domain.ports import StateStore
from domain.refs import WorkItemRef


def attention(store: StateStore) -> dict[str, ItemStatus]:
    """Each item that needs attention, by its name, in the order of the items."""
    slots = {wait.item: wait.since for wait in waits(store.meta())}
    records = {record.item: record for record in store.sessions()}
    items = set(store.items()) | set(records) | {WorkItemRef.parse(item) for item in slots}
    return needs_attention(
        {
            str(item): held_of(records.get(item), store.ledger(item), slot_since=slots.get(str(item)))
            for item in sorted(items)
        }
    )
