"""The lean `status`'s "needs attention": what `app.usecases.views.attention` finds, from the rows of
the SQLite store opened read-only. Only the rows of an item they say something holds are decoded
whole (`adapters.sql.session_rows.held_rows`), and only then are the domain model and the state's
rules imported; the state of each is made by the same function as the full path's. The one module of
`app` besides `app.cli.lean_listing` that reads those rows (the import-linter contract names it)."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from adapters.sql.session_rows import SLOT_WAIT, held_rows

if TYPE_CHECKING:
    from domain.fleet import ItemStatus


def attention(db: sqlite3.Connection) -> dict[str, ItemStatus]:
    """Each item that needs attention, by its name, in the order of the items. Raises what a row raises."""
    rows, slots = held_rows(db)
    if not rows:
        return {}
    from domain.fleet import needs_attention
    from domain.item_facts import held_of

    return needs_attention({item: held_of(record, ledger, slot_since=slots.get(item)) for item, record, ledger in rows})


def slot_waits(db: sqlite3.Connection) -> bool:
    """Whether any item waits for a free slot (the full path shows each wait with the host's bound)."""
    query = "SELECT EXISTS (SELECT 1 FROM meta WHERE substr(key, 1, ?) = ? AND value <> '')"
    return bool(db.execute(query, (len(SLOT_WAIT), SLOT_WAIT)).fetchone()[0])
