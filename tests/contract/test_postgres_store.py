"""What only the PostgreSQL store does: create, migrate or refuse a database; name its server, never a password."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import psycopg
import pytest

from adapters.postgres.schema import STATE_SCHEMA, prepare
from adapters.postgres.server import server_of
from adapters.postgres.store import PostgresStateStore
from adapters.sql.schema import Schema
from domain.errors import StateError
from domain.ledger import Ledger
from domain.refs import WorkItemRef
from tests.postgres_support import APP_PASSWORD, PgCluster

ITEM = WorkItemRef.parse("github:acme/widgets#7")


def refusal(dsn: str) -> str:
    with pytest.raises(StateError) as caught:
        PostgresStateStore(dsn, connect_timeout_seconds=5)
    return str(caught.value)


def tables(postgres: PgCluster, dbname: str) -> list[tuple[object, ...]]:
    return postgres.sql(
        dbname, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1"
    )


def test_an_empty_database_gets_the_loops_tables_at_the_current_schema_version(postgres: PgCluster) -> None:
    dbname = postgres.new_database()

    PostgresStateStore(postgres.dsn(dbname)).close()

    tables_made = [t for (t,) in tables(postgres, dbname)]
    assert tables_made == [
        "budget_marks", "cursors", "hosts", "inbox", "leases", "ledgers", "listings", "meta", "sessions",
        "the_loop_schema", "turn_costs",
    ]  # fmt: skip
    assert postgres.sql(dbname, "SELECT version FROM the_loop_schema") == [(STATE_SCHEMA.version,)]


def test_a_newer_schema_version_is_refused_naming_the_server_and_nothing_is_changed(postgres: PgCluster) -> None:
    dbname = postgres.new_database()
    PostgresStateStore(postgres.dsn(dbname)).close()
    postgres.sql(dbname, f"UPDATE the_loop_schema SET version = {STATE_SCHEMA.version + 1}")

    message = refusal(postgres.dsn(dbname))

    assert "newer than this the-loop understands" in message
    assert f":{postgres.port}/{dbname}" in message
    assert postgres.sql(dbname, "SELECT version FROM the_loop_schema") == [(STATE_SCHEMA.version + 1,)]


def test_a_database_holding_someone_elses_tables_is_refused_and_left_as_it_was(postgres: PgCluster) -> None:
    dbname = postgres.new_database()
    postgres.sql(dbname, "CREATE TABLE photos (id INTEGER)")
    postgres.sql(dbname, "ALTER TABLE photos OWNER TO loop_app")

    message = refusal(postgres.dsn(dbname))

    assert "not the-loop's" in message and "photos" in message
    assert tables(postgres, dbname) == [("photos",)]


def test_a_refused_password_names_host_port_and_database_and_never_the_password(postgres: PgCluster) -> None:
    dbname = postgres.new_database()
    wrong = "wrong-" + APP_PASSWORD

    message = refusal(postgres.tcp_dsn(dbname, password=wrong))

    assert f"postgres 127.0.0.1:{postgres.port}/{dbname}" in message
    assert "password authentication failed" in message
    assert wrong not in message and APP_PASSWORD not in message


def test_the_right_password_over_tcp_opens_the_store(postgres: PgCluster) -> None:
    dbname = postgres.new_database()

    store = PostgresStateStore(postgres.tcp_dsn(dbname))

    assert (str(store.server), dict(store.meta())) == (f"postgres 127.0.0.1:{postgres.port}/{dbname}", {})
    assert APP_PASSWORD not in repr(store.server)


def test_a_server_that_does_not_answer_is_a_state_error_naming_it(postgres: PgCluster) -> None:
    closed_port = postgres.port + 1 if postgres.port < 65535 else postgres.port - 1

    message = refusal(f"postgresql://loop_app:{APP_PASSWORD}@127.0.0.1:{closed_port}/nowhere")

    assert f"postgres 127.0.0.1:{closed_port}/nowhere: cannot connect" in message
    assert APP_PASSWORD not in message


def test_a_dsn_that_is_not_a_connection_string_is_refused_without_quoting_it() -> None:
    message = refusal("user=loop_app hunter2-secret host=db")

    assert "not a libpq connection string" in message and "hunter2" not in message


def test_a_broken_connection_fails_that_call_and_the_next_call_connects_again(postgres: PgCluster) -> None:
    dbname = postgres.new_database()
    store = PostgresStateStore(postgres.dsn(dbname))
    store.save_meta("kept", "yes")
    postgres.sql(
        dbname, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database()"
        " AND pid <> pg_backend_pid()"
    )  # fmt: skip

    with pytest.raises(StateError, match=f":{postgres.port}/{dbname}"):
        store.meta()

    assert store.meta() == {"kept": "yes"}


def test_a_row_this_version_cannot_decode_is_a_state_error_naming_the_server(postgres: PgCluster) -> None:
    dbname = postgres.new_database()
    store = PostgresStateStore(postgres.dsn(dbname))
    store.save_ledger(Ledger(item=ITEM, baseline_at=datetime(2025, 1, 1, tzinfo=UTC)))
    postgres.sql(dbname, """UPDATE ledgers SET data = '{"item": 5}'""")

    with pytest.raises(StateError, match=f"/{dbname}: undecodable row"):
        store.ledger(ITEM)


def test_stores_opening_an_empty_database_at_once_create_it_once(postgres: PgCluster) -> None:
    dbname = postgres.new_database()
    start, failures = threading.Barrier(4), []

    def open_one() -> None:
        start.wait()  # four connections, each its own server session, start preparing together
        try:
            PostgresStateStore(postgres.dsn(dbname)).close()
        except StateError as error:
            failures.append(str(error))

    openers = [threading.Thread(target=open_one) for _ in range(4)]
    for opener in openers:
        opener.start()
    for opener in openers:
        opener.join()

    assert failures == []
    assert postgres.sql(dbname, "SELECT version FROM the_loop_schema") == [(STATE_SCHEMA.version,)]


V1 = Schema(version=1, tables=("CREATE TABLE the_loop_schema (version INTEGER NOT NULL)", "CREATE TABLE t (k TEXT)"))
V3 = Schema(
    version=3,
    tables=(*V1.tables[:1], "CREATE TABLE t (k TEXT, a INTEGER NOT NULL DEFAULT 1, b TEXT)"),
    migrations=(("ALTER TABLE t ADD COLUMN a INTEGER NOT NULL DEFAULT 1",), ("ALTER TABLE t ADD COLUMN b TEXT",)),
)


def opened_at(postgres: PgCluster, dbname: str, schema: Schema) -> None:
    with psycopg.connect(postgres.dsn(dbname), autocommit=True) as db:
        prepare(db, "toy", schema)


def test_a_database_of_an_older_version_is_migrated_through_every_step_keeping_its_rows(postgres: PgCluster) -> None:
    dbname = postgres.new_database()
    opened_at(postgres, dbname, V1)
    postgres.sql(dbname, "INSERT INTO t VALUES ('kept')")

    opened_at(postgres, dbname, V3)

    assert postgres.sql(dbname, "SELECT version FROM the_loop_schema") == [(3,)]
    assert postgres.sql(dbname, "SELECT k, a, b FROM t") == [("kept", 1, None)]


def test_a_migration_that_fails_leaves_the_database_at_its_version_with_nothing_half_done(
    postgres: PgCluster,
) -> None:
    dbname = postgres.new_database()
    opened_at(postgres, dbname, V1)
    broken = Schema(version=3, tables=V3.tables, migrations=(V3.migrations[0], ("ALTER TABLE gone ADD b TEXT",)))

    with pytest.raises(psycopg.Error):
        opened_at(postgres, dbname, broken)

    assert postgres.sql(dbname, "SELECT version FROM the_loop_schema") == [(1,)]
    columns = postgres.sql(dbname, "SELECT column_name FROM information_schema.columns WHERE table_name = 't'")
    assert columns == [("k",)]


def test_the_server_a_dsn_names_is_shown_without_its_password_and_a_message_holding_it_is_masked() -> None:
    server = server_of("postgresql://loop:pw-7f3a@db.internal:6543/state")

    assert (str(server), "pw-7f3a" in repr(server)) == ("postgres db.internal:6543/state", False)
    assert server.hide("FATAL: role loop with pw-7f3a refused") == "FATAL: role loop with ******** refused"


def test_a_schema_2_database_gains_the_cluster_and_cost_tables_and_hosts_memory_keeping_its_rows(
    postgres: PgCluster,
) -> None:
    dbname = postgres.new_database()
    schema_2 = Schema(version=2, tables=STATE_SCHEMA.tables[:6], migrations=STATE_SCHEMA.migrations[:1])
    opened_at(postgres, dbname, schema_2)
    postgres.sql(dbname, "INSERT INTO meta VALUES ('kept', 'yes')")

    PostgresStateStore(postgres.dsn(dbname)).close()

    assert postgres.sql(dbname, "SELECT version FROM the_loop_schema") == [(STATE_SCHEMA.version,)] == [(5,)]
    assert postgres.sql(dbname, "SELECT key, value FROM meta") == [("kept", "yes")]
    assert {"hosts", "leases", "listings", "turn_costs", "budget_marks"} <= {t for (t,) in tables(postgres, dbname)}
    columns = postgres.sql(dbname, "SELECT column_name FROM information_schema.columns WHERE table_name = 'hosts'")
    assert ("memory_short",) in columns
