"""The lean start of the read-only commands: `status`, `sessions list` and `events`
on a SQLite state, started from the settings snapshot (`app.config.snapshot`) without the parser of
every command, pydantic, dependency-injector or the container.

`run_fast` answers only the plain forms it knows (below); for anything else it returns None before
printing a byte, and `app.cli.main` runs the full path, which also refreshes the snapshot:
- no snapshot for exactly this configuration, environment and code, or `state.backend: postgres`;
- `--help`, an abbreviated, repeated or unknown option, `--config=` forms, any usage error;
- `events --since/--work-item/--follow`;
- `sessions list` when any part of its listing fails (it reads the recorded sessions, asks tmux once and
  reads the receipts of each through `app.cli.lean_listing`, without the domain model): a row the
  store would refuse, a tmux that does not answer cleanly;
- a state store this version would migrate or refuse, or any SQLite error;
- `status` and `sessions list` while an item waits for a free slot (the full path shows the waits
  with the host's bound, which comes from the machine's memory when not configured).
What they print is made by the same functions as the full path's (`app.cli.read_views`,
`app.cli.events_view`, `app.usecases.views.poller_status`, `app.usecases.views.session_shown`), so the two
cannot drift apart.

This module and `app.cli.lean_listing` alone besides `app.container` import adapters (here the
event-log reader and the poller lock, both cheap): exceptions the import-linter contract names
(pyproject.toml).
"""

from __future__ import annotations

import sqlite3
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from app.cli.read_views import no_sessions_line, where_json, where_line
from app.config import snapshot

STATE_FILE = "state.sqlite3"  # adapters.sqlite.store.FILE_NAME (a test keeps them equal)
_STATUSES = ("active", "paused", "closed", "stopped")  # `sessions list --status` (a test keeps them equal)
HEARTBEAT = "heartbeat"  # app.usecases.cycle.daemon.heartbeat_key on one host (a test keeps them equal)
_OPTIONS: dict[str, dict[str, bool]] = {  # option -> takes a value
    "status": {"--json": False},
    "sessions list": {"--json": False, "--status": True},
    "events": {"--json": False, "--limit": True, "--level": True, "--type": True},
}


class _Fallback(Exception):
    """This run needs the full path."""


def run_fast(argv: Sequence[str], environ: Mapping[str, str]) -> int | None:
    """The exit status of a plain read-only command answered from the snapshot; None: use the full path."""
    parsed = plain(argv)
    if parsed is None:
        return None
    flag, name, options = parsed
    found = snapshot.read(flag, environ)
    if found is None or found.backend != "sqlite":
        return None
    try:
        return _COMMANDS[name](found, options)
    except _Fallback:
        return None


def plain(argv: Sequence[str]) -> tuple[str | None, str, dict[str, str | bool]] | None:
    """(--config, the command, its options) of a form the lean path answers; None: any other."""
    tokens, flag = list(argv), None
    if tokens[:1] == ["--config"] and len(tokens) > 1 and tokens[1] and not tokens[1].startswith("-"):
        flag, tokens = tokens[1], tokens[2:]
    name = "sessions list" if tokens[:2] == ["sessions", "list"] else tokens[0] if tokens else ""
    if name not in _OPTIONS:
        return None
    rest = tokens[len(name.split()) :]
    options: dict[str, str | bool] = {}
    while rest:
        option = rest.pop(0)
        takes = _OPTIONS[name].get(option)
        if takes is None or option in options:
            return None
        if takes:
            if not rest or not rest[0] or rest[0].startswith("-"):
                return None
            options[option] = rest.pop(0)
        else:
            options[option] = True
    limit = options.get("--limit")
    if isinstance(limit, str) and not limit.isdigit():
        return None
    return flag, name, options


def _where(found: snapshot.Snapshot, options: Mapping[str, object]) -> None:
    """What the full path prints first on a terminal (after loading the configuration)."""
    if sys.stdout.isatty() and not options.get("--json"):
        print(where_line(_config(found), found.state_root_path.absolute()), flush=True)


def _config(found: snapshot.Snapshot) -> Path | None:
    return Path(found.config_path) if found.config_path else None


def _store(state_root: Path) -> sqlite3.Connection | None:
    """The state store opened read-only; None when there is none. A store of another schema
    version (the full path would migrate or refuse it) takes the full path."""
    from adapters.sql.sqlite_file import STATE_SCHEMA

    path = state_root / STATE_FILE
    if not path.exists():
        return None
    try:
        db = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
        if db.execute("PRAGMA user_version").fetchone()[0] != STATE_SCHEMA.version:
            db.close()
            raise _Fallback
    except sqlite3.Error:
        raise _Fallback from None
    return db


def _no_slot_waits(db: sqlite3.Connection) -> None:
    """`_Fallback` while an item waits for a free slot: the full path shows it."""
    from app.cli.lean_attention import slot_waits

    if slot_waits(db):
        raise _Fallback


def _status(found: snapshot.Snapshot, options: Mapping[str, object]) -> int:
    from adapters.lock import PollerLock
    from app.cli.read_views import status_output
    from app.usecases.views.poller_status import poller_status

    state_root = found.state_root_path
    holder = PollerLock(state_root / "poller.lock").holder()
    db = _store(state_root)
    beat, held = None, {}
    if db is not None:
        try:
            _no_slot_waits(db)
            row = db.execute("SELECT value FROM meta WHERE key = ?", (HEARTBEAT,)).fetchone()
            if db.execute("SELECT EXISTS (SELECT 1 FROM sessions) OR EXISTS (SELECT 1 FROM ledgers)").fetchone()[0]:
                from app.cli.lean_attention import attention

                held = attention(db)
        except Exception:
            raise _Fallback from None
        finally:
            db.close()
        beat = row[0] if row else None
    status = poller_status(
        holder=holder,
        heartbeat_text=beat,
        now=datetime.now(UTC),  # noqa: TID251 - as adapters.clock.SystemClock reads it
        interval_seconds=found.interval_seconds,
        monotonic=time.clock_gettime(getattr(time, "CLOCK_BOOTTIME", time.CLOCK_MONOTONIC)),  # as SystemClock
    )
    where = where_json(_config(found), state_root.absolute())
    _where(found, options)
    print(status_output(status, where, json_out=bool(options.get("--json")), attention=held))
    return int(status.exit)


def _sessions_list(found: snapshot.Snapshot, options: Mapping[str, object]) -> int:
    from app.cli.read_views import COLUMNS, session_json, session_row, table

    status = options.get("--status")
    if status is not None and status not in _STATUSES:
        raise _Fallback  # the full parser says what is wrong
    state_root = found.state_root_path
    db = _store(state_root)
    views = []
    if db is not None:
        try:
            _no_slot_waits(db)
            if db.execute("SELECT EXISTS (SELECT 1 FROM sessions) OR EXISTS (SELECT 1 FROM ledgers)").fetchone()[0]:
                from app.cli.lean_listing import listing

                views = listing(found, db, str(status) if status else None)
        except Exception:
            raise _Fallback from None
        finally:
            db.close()
    _where(found, options)
    if options.get("--json"):
        where = where_json(_config(found), state_root.absolute())
        for view in views:
            print(session_json(view, where))
    elif not views:
        print(no_sessions_line(str(status) if status else None, state_root.absolute()), file=sys.stderr)
    else:
        print("\n".join(table([COLUMNS, *(session_row(view) for view in views)])))
    return 0


def _events(found: snapshot.Snapshot, options: Mapping[str, object]) -> int:
    from adapters.eventlog.reader import Skipped, read_events
    from app.cli.events_view import show_events
    from domain.events import Level

    level = options.get("--level")
    if level is not None and level not in {known.value for known in Level}:
        raise _Fallback  # the full parser says what is wrong
    path = found.event_log_path
    limit = int(str(options.get("--limit", "50")))
    types = options.get("--type")
    skipped = Skipped()
    shown = read_events(
        path,
        since=None,
        types=str(types) if types else None,
        work_item=None,
        level=Level(level) if level else None,
        limit=limit or None,
        skipped=skipped,
    )
    _where(found, options)
    json_lines = bool(options.get("--json"))
    return show_events(shown, iter(()), path=path, json_lines=json_lines, follow=False, skipped=skipped.lines)


_COMMANDS = {"status": _status, "sessions list": _sessions_list, "events": _events}
