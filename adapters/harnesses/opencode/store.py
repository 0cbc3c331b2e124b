"""opencode's own store, read for what a turn cost: the SQLite database it keeps under its data home
(what `opencode db path` prints), which the plugin names in its receipts. Read only, three queries,
nothing held open: opencode writes it all along (WAL), and a reader never blocks it."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from domain.usage import UsageUnknown

_BUSY_SECONDS = 1.0  # a read waits this long at most behind opencode's checkpoint of its log

_PROMPT = "SELECT session_id, time_created FROM message WHERE id = ?"
_MESSAGES = "SELECT id, data FROM message WHERE session_id = ? AND time_created >= ? ORDER BY time_created, id"
_SUBAGENTS = "SELECT count(*) FROM session WHERE parent_id = ? AND time_created >= ?"


@dataclass(frozen=True, slots=True)
class Stored:
    """What the store holds from a prompt on, in its session."""

    messages: list[dict[str, Any]]  # each message's `data`, its `id` added, in order, the prompt's own among them
    subagents: int  # sessions started under the prompt's session since the prompt


def stored(path: str, prompt_id: str) -> Stored | UsageUnknown:
    """The session's messages from the prompt `prompt_id` on, as the store at `path` holds them."""
    if not os.path.isabs(path):
        return UsageUnknown("its store's path is not absolute")
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return UsageUnknown("its store is not a file")
        with closing(sqlite3.connect(Path(path).as_uri() + "?mode=ro", uri=True, timeout=_BUSY_SECONDS)) as db:
            return _read(db, prompt_id)
    except (OSError, sqlite3.Error) as error:
        return UsageUnknown(f"opencode's store cannot be read: {error}")


def _read(db: sqlite3.Connection, prompt_id: str) -> Stored | UsageUnknown:
    prompt = db.execute(_PROMPT, (prompt_id,)).fetchone()
    if prompt is None:
        return UsageUnknown("its prompt is not in opencode's store (yet)", pending=True)
    session, since = prompt
    messages = []
    for message_id, data in db.execute(_MESSAGES, (session, since)):
        try:
            message = json.loads(data)
        except (TypeError, ValueError, RecursionError):
            return UsageUnknown("a message of its session in opencode's store is not JSON")
        if not isinstance(message, dict):
            return UsageUnknown("a message of its session in opencode's store is not an object")
        messages.append(message | {"id": message_id})
    (subagents,) = db.execute(_SUBAGENTS, (session, since)).fetchone()
    return Stored(messages, subagents)
