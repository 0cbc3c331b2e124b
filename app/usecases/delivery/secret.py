"""The secret that keys receipt tags: made once per state store, shared by every process using it."""

from __future__ import annotations

import secrets

from domain.ports import StateStore

META_KEY = "receipt-secret"


def receipt_secret(store: StateStore) -> str:
    """The stored secret, or a new one stored now (in one transaction, so two processes starting
    together keep one of theirs: each re-reads it inside the transaction)."""
    with store.transaction():
        found = store.meta().get(META_KEY)
        if found:
            return found
        made = secrets.token_hex(32)
        store.save_meta(META_KEY, made)
        return made
