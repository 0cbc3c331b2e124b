"""The one state an item shows (the fleet page and its JSON): its harness's, or what says more."""

from __future__ import annotations

import enum

from domain.receipts import HarnessState


class ItemState(enum.StrEnum):
    """An item's state as the page shows it; its value is the page's `state` (JSON, filter, badge)."""

    STARTING = HarnessState.STARTING.value
    READY = HarnessState.READY.value
    BUSY = HarnessState.BUSY.value
    TOOL = HarnessState.TOOL.value
    IDLE = HarnessState.IDLE.value
    BLOCKED = HarnessState.BLOCKED.value
    ENDED = HarnessState.ENDED.value
    DEAD = HarnessState.DEAD.value
    UNKNOWN = HarnessState.UNKNOWN.value
    CLOSED = "closed"
    PAUSED = "paused"
    ELSEWHERE = "elsewhere"  # its session runs on another host: its harness is not looked at from here
    NONE = "none"  # a ledger, no session


def item_state(harness: HarnessState, *, closed: bool, paused: bool, here: bool) -> ItemState:
    """Closed and paused say more than what the harness does."""
    if closed:
        return ItemState.CLOSED
    if paused:
        return ItemState.PAUSED
    return ItemState(harness.value) if here else ItemState.ELSEWHERE
