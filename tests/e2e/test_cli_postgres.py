"""The CLI with `state.backend: postgres`: the poller, the operator's commands and `status` share the
database; a bad or unreachable one is one clear line that never shows the password."""

from __future__ import annotations

import json

from domain.events import Event
from tests.e2e.loop_rig import Loop, loop
from tests.postgres_support import APP_PASSWORD, PgCluster
from tests.tmux_support import real_tmux, wait_for

__all__ = ["loop", "real_tmux"]


def on_postgres(loop: Loop, postgres: PgCluster) -> Loop:
    loop.state_keys = {"backend": "postgres", "dsn": postgres.new_schema()}
    return loop


def test_poll_delivers_with_every_ledger_and_record_in_postgres_and_no_sqlite_file(
    loop: Loop, postgres: PgCluster
) -> None:
    (ref,) = on_postgres(loop, postgres).with_sessions(1)
    loop.comment(ref, "please add a test")

    result = loop.cli("poll", "--once")

    assert result.returncode == 0, result.stderr
    wait_for(lambda: any("please add a test" in text for text in loop.pasted()), what="the paste")
    store = loop.store()
    ledger, record = store.ledger(ref), store.session(ref)
    assert ledger is not None and [r.kind.value for r in ledger.resolved.values()] == ["delivered"]
    assert record is not None and record.version >= 2
    assert not (loop.state / "state.sqlite3").exists()


def test_the_operators_commands_and_status_read_the_same_database(loop: Loop, postgres: PgCluster) -> None:
    (ref,) = on_postgres(loop, postgres).with_sessions(1)

    listed = loop.json_lines("sessions", "list", "--json")
    closed = loop.cli("sessions", "close", "--work-item", str(ref), "--keep-tmux")
    status = loop.cli("status", "--json")

    assert [(row["work_item"], row["status"]) for row in listed] == [(str(ref), "active")]
    assert closed.returncode == 0, closed.stderr
    record = loop.store().session(ref)
    assert record is not None and record.status.value == "closed"
    assert json.loads(status.stdout)["last_cycle"] is not None, status.stdout


def test_an_unreachable_database_is_one_line_naming_the_server_never_the_password(
    loop: Loop, postgres: PgCluster
) -> None:
    closed_port = postgres.port + 1 if postgres.port < 65535 else postgres.port - 1
    loop.state_keys = {
        "backend": "postgres",
        "dsn": f"postgresql://loop_app:{APP_PASSWORD}@127.0.0.1:{closed_port}/loop",
    }

    result = loop.cli("poll", "--once")

    assert result.returncode == 1
    assert f"postgres 127.0.0.1:{closed_port}/loop: cannot connect" in result.stderr
    assert APP_PASSWORD not in result.stderr and "Traceback" not in result.stderr
    assert Event.POLL_CYCLE not in loop.event_names()


def test_postgres_without_a_dsn_is_a_config_error_naming_the_key(loop: Loop) -> None:
    loop.state_keys = {"backend": "postgres"}

    result = loop.cli("poll", "--once")

    assert result.returncode == 2
    assert "state.dsn: required when backend is postgres" in result.stderr
