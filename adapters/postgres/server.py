"""Which PostgreSQL server a connection string names, said without its password."""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass, field

import psycopg
from psycopg.conninfo import conninfo_to_dict

from domain.errors import StateError, StoreUnreachable

HIDDEN = "********"


@dataclass(frozen=True, slots=True)
class Server:
    """What errors name: host (or socket folder), port and database; never the password."""

    host: str
    port: str
    dbname: str
    password: str = field(default="", repr=False, compare=False)

    def __str__(self) -> str:
        return f"postgres {self.host}:{self.port}/{self.dbname}"

    def hide(self, text: str) -> str:
        """`text` (a driver's message) with the password, should it appear, masked."""
        return text.replace(self.password, HIDDEN) if self.password else text


def server_of(dsn: str) -> Server:
    """The server `dsn` names, with libpq's defaults for what it leaves out.

    Raises `StateError` when `dsn` is not a connection string; the message never quotes it, as
    the driver's own would (it may hold the password)."""
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        raise StateError(
            "state store: state.dsn is not a libpq connection string "
            "(`host=… port=… dbname=… user=…` or `postgresql://user@host:port/dbname`)"
        ) from None
    user = str(params.get("user") or os.environ.get("PGUSER") or getpass.getuser())
    return Server(
        host=str(params.get("host") or os.environ.get("PGHOST") or "localhost"),
        port=str(params.get("port") or os.environ.get("PGPORT") or "5432"),
        dbname=str(params.get("dbname") or os.environ.get("PGDATABASE") or user),
        password=str(params.get("password") or ""),
    )


def failure(server: Server, error: psycopg.Error, doing: str = "") -> StateError:
    """The driver's error as the-loop's, naming the server: `StoreUnreachable` when the connection
    failed or was lost (it may come back), `StateError` for what the database refused."""
    text = f"state store {server}: {doing}{server.hide(str(error)).strip()}"
    return StoreUnreachable(text) if isinstance(error, psycopg.OperationalError) else StateError(text)
