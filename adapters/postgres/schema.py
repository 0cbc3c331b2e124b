"""The state store's tables in PostgreSQL: created in an empty schema, migrated step by step,
refused when newer than this the-loop or when the schema holds someone else's tables."""

from __future__ import annotations

from psycopg import Connection
from psycopg.rows import TupleRow

from adapters.sql.schema import Schema
from domain.errors import StateError

MARKER = "the_loop_schema"  # one row: the schema version; its absence beside other tables means "not ours"
# every outermost transaction of the-loop on a database takes this lock first (see the store)
LOCK_KEY = 0x7468_656C_6F6F_70  # "theloop"


_INBOX = (
    "CREATE TABLE inbox (item TEXT NOT NULL, comment TEXT NOT NULL, created_at TEXT NOT NULL,"
    " data TEXT NOT NULL, PRIMARY KEY (item, comment))"
)
_CLUSTER = (
    # one row a host: its heartbeat on the database's clock, and what `status` shows of it
    "CREATE TABLE hosts (host TEXT PRIMARY KEY, max_sessions INTEGER NOT NULL, heartbeat_at TIMESTAMPTZ NOT NULL,"
    " stopped BOOLEAN NOT NULL DEFAULT FALSE, pid INTEGER NOT NULL DEFAULT 0, version TEXT NOT NULL DEFAULT '')",
    # one row a work item: which host holds it ('' none) until when, on the database's clock
    "CREATE TABLE leases (item TEXT PRIMARY KEY, host TEXT NOT NULL DEFAULT '', expires_at TIMESTAMPTZ NOT NULL,"
    " starts_at TIMESTAMPTZ NOT NULL, previous TEXT NOT NULL DEFAULT '', how TEXT NOT NULL DEFAULT 'placed')",
    "CREATE INDEX leases_by_host ON leases (host)",
    # what each repository's reader listed, for every host to work from
    "CREATE TABLE listings (repo TEXT NOT NULL, item TEXT NOT NULL, data TEXT NOT NULL, label TEXT NOT NULL,"
    " history BOOLEAN NOT NULL, state TEXT NOT NULL, PRIMARY KEY (repo, item))",
)
# one row a turn the-loop started and saw end, with what it cost; and the notices budgets gave, once each
_SPENDING = (
    "CREATE TABLE turn_costs (item TEXT NOT NULL, comment TEXT NOT NULL, ended_at TEXT NOT NULL,"
    " repo TEXT NOT NULL, harness TEXT NOT NULL, author TEXT NOT NULL, labels TEXT NOT NULL, model TEXT NOT NULL,"
    " known INTEGER NOT NULL, tokens_in BIGINT NOT NULL, tokens_out BIGINT NOT NULL,"
    " cache_write BIGINT NOT NULL, cache_read BIGINT NOT NULL, micro_dollars BIGINT,"
    " PRIMARY KEY (item, comment))",
    "CREATE INDEX turn_costs_by_time ON turn_costs (ended_at)",
    "CREATE TABLE budget_marks (mark TEXT PRIMARY KEY, at TEXT NOT NULL)",
)
# each host's heartbeat says whether its free memory admits a new agent
_HOST_MEMORY = ("ALTER TABLE hosts ADD COLUMN memory_short BOOLEAN NOT NULL DEFAULT FALSE",)
STATE_SCHEMA = Schema(
    version=5,
    tables=(
        "CREATE TABLE the_loop_schema (version INTEGER NOT NULL)",
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        # TEXT, not JSONB: the codec's JSON escapes NUL as \\u0000, which JSONB refuses
        "CREATE TABLE ledgers (item TEXT PRIMARY KEY, data TEXT NOT NULL, version INTEGER NOT NULL)",
        "CREATE TABLE sessions (item TEXT PRIMARY KEY, data TEXT NOT NULL, version INTEGER NOT NULL)",
        "CREATE TABLE cursors (repo TEXT PRIMARY KEY, cursor TEXT NOT NULL)",
        _INBOX,
        *_CLUSTER,
        *_SPENDING,
        *_HOST_MEMORY,
    ),
    migrations=(
        # 1 -> 2: comments kept for their items until worked (a repository's read, a webhook's)
        (_INBOX,),
        # 2 -> 3: several hosts sharing the work (hosts, leases, shared listings)
        _CLUSTER,
        # 3 -> 4: what each turn cost, and the budgets' notices
        _SPENDING,
        # 4 -> 5: each host's memory, as its heartbeat says it
        _HOST_MEMORY,
    ),
)

_TABLES = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1"


def prepare(db: Connection[TupleRow], name: str, schema: Schema = STATE_SCHEMA) -> None:
    """Create, migrate or verify the-loop's tables in the connection's current schema, in one
    transaction under the-loop's lock (two processes opening an empty database create it once).

    Raises `StateError` naming `name` for a newer schema or a schema that is not the-loop's;
    nothing is written then. Driver errors propagate for the caller to name."""
    with db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        tables = [str(row[0]) for row in db.execute(_TABLES)]
        if MARKER not in tables:
            if tables:
                raise StateError(
                    f"{name}: a database that is not the-loop's (tables {tables[:5]}, no {MARKER}); "
                    "point state.dsn at an empty database or schema"
                )
            _run(db, schema.tables)
            db.execute("INSERT INTO the_loop_schema VALUES (%s)", (schema.version,))
            return
        found = _found_version(db, name)
        if found > schema.version:
            raise StateError(
                f"{name}: schema version {found} is newer than this the-loop understands "
                f"({schema.version}); upgrade the-loop or point state.dsn elsewhere"
            )
        _run(db, tuple(step for steps in schema.migrations[found - 1 :] for step in steps))
        if found != schema.version:
            db.execute("UPDATE the_loop_schema SET version = %s", (schema.version,))


def _found_version(db: Connection[TupleRow], name: str) -> int:
    rows = db.execute("SELECT version FROM the_loop_schema").fetchall()
    if len(rows) != 1 or not isinstance(rows[0][0], int) or rows[0][0] < 1:
        raise StateError(f"{name}: {MARKER} holds {rows!r}, not one schema version")
    return rows[0][0]


def _run(db: Connection[TupleRow], statements: tuple[str, ...]) -> None:
    for statement in statements:
        db.execute(statement)
