"""Test support for PostgreSQL: a private server from the distribution's binaries (its own folder,
port and socket folder), and a fresh database for each test."""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pytest

SUPERUSER = "postgres"
SHARED_DB = "loop_tests"  # holds a schema per test: creating one costs a fraction of a database
APP_USER, APP_PASSWORD = "loop_app", "pw-never-shown-4f1c"  # a password login, over TCP only


def server_binaries() -> Path:
    """The newest /usr/lib/postgresql/<version>/bin; missing binaries fail loudly, never skip."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if not found:
        pytest.fail(
            "PostgreSQL server binaries not found under /usr/lib/postgresql/<version>/bin: "
            "scripts/bootstrap.sh --tests installs Debian's `postgresql`",
            pytrace=False,
        )
    return Path(found[-1]).parent


@dataclass
class PgCluster:
    """A running private cluster; `stop()` ends it and removes its folder."""

    root: Path
    bin: Path
    port: int
    as_owner: tuple[str, ...]  # runs a server binary as the unprivileged owner of the folder
    _names: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def sockets(self) -> Path:
        return self.root / "sockets"

    def dsn(self, dbname: str, *, user: str = APP_USER) -> str:
        """A connection over the unix socket (trust: no password), by default as the app's
        unprivileged role."""
        return f"host={self.sockets} port={self.port} dbname={dbname} user={user}"

    def tcp_dsn(self, dbname: str, *, password: str = APP_PASSWORD) -> str:
        return f"postgresql://{APP_USER}:{password}@127.0.0.1:{self.port}/{dbname}"

    def new_schema(self) -> str:
        """A connection string whose current schema is an empty one of its own, in a shared database."""
        name = f"s_{os.getpid()}_{next(self._names)}"
        self.sql(SHARED_DB, f"CREATE SCHEMA {name} AUTHORIZATION {APP_USER}")
        return f"{self.dsn(SHARED_DB)} options='-c search_path={name}'"

    def new_database(self) -> str:
        """An empty database of its own, owned by the app user; its name."""
        name = f"loop_{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.dsn("postgres", user=SUPERUSER), autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}" OWNER {APP_USER}')
        return name

    def sql(self, dbname: str, statement: str) -> list[tuple[object, ...]]:
        with psycopg.connect(self.dsn(dbname, user=SUPERUSER), autocommit=True) as admin:
            cursor = admin.execute(statement)  # type: ignore[arg-type]
            return cursor.fetchall() if cursor.description else []

    def stop(self) -> None:
        subprocess.run(
            [*self.as_owner, str(self.bin / "pg_ctl"), "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop"],
            capture_output=True,
            check=False,
        )
        shutil.rmtree(self.root, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _owner() -> tuple[str, ...]:
    # PostgreSQL refuses to run as root: as root, its binaries run as the package's `postgres` user
    return ("runuser", "-u", "postgres", "--") if os.geteuid() == 0 else ()


def start_cluster(*, durable: bool = False) -> PgCluster:
    """A private server; without `durable`, commits skip fsync (tests need no crash safety, and the
    machine's disk is shared)."""
    binaries = server_binaries()
    # under /tmp, not pytest's tmp_path: a unix socket's path must stay under ~100 bytes
    root = Path(tempfile.mkdtemp(prefix="the-loop-pg-"))
    cluster = PgCluster(root=root, bin=binaries, port=_free_port(), as_owner=_owner())
    cluster.sockets.mkdir()
    if cluster.as_owner:
        shutil.chown(root, "postgres")
        shutil.chown(cluster.sockets, "postgres")
    data, log = root / "data", root / "server.log"
    steps = [
        [str(binaries / "initdb"), "-D", str(data), "-U", SUPERUSER, "--auth-local=trust",
         "--auth-host=scram-sha-256", "--no-sync", "-E", "UTF8", "--locale=C"],
        [str(binaries / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60", "-o",
         f"-p {cluster.port} -k {cluster.sockets} -c listen_addresses=127.0.0.1" + ("" if durable else " -F"),
         "start"],
    ]  # fmt: skip
    for argv in steps:
        done = subprocess.run([*cluster.as_owner, *argv], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            server_log = log.read_text(errors="replace") if log.exists() else ""
            cluster.stop()
            pytest.fail(f"{argv[0]} failed ({done.returncode}): {done.stderr}{server_log}", pytrace=False)
    with psycopg.connect(cluster.dsn("postgres", user=SUPERUSER), autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {APP_USER} LOGIN PASSWORD '{APP_PASSWORD}'")
        admin.execute(f"CREATE DATABASE {SHARED_DB} OWNER {APP_USER}")
    return cluster


@pytest.fixture(scope="session")
def postgres() -> Iterator[PgCluster]:
    """One private PostgreSQL server for the whole run."""
    cluster = start_cluster()
    yield cluster
    cluster.stop()
