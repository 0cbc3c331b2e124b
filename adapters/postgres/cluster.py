"""The cluster on PostgreSQL: hosts and heartbeats, item leases (`FOR UPDATE SKIP LOCKED`, expiry on
the database's clock), repository locks (session-level advisory locks) and the shared listings."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from adapters.postgres.connection import PgConnection, Session
from adapters.sql.state_codec import decode_item, encode_item
from domain.cluster import (
    Departed,
    Handover,
    Held,
    HostState,
    HostView,
    Lease,
    LeaseTiming,
    Listed,
    Placement,
    Shared,
)
from domain.errors import LeaseLost
from domain.model import ItemState
from domain.ports import ClusterPort
from domain.refs import RepoRef, WorkItemRef

_HOSTS = """
SELECT h.host, h.max_sessions, extract(epoch FROM now() - h.heartbeat_at)::float8, h.stopped, h.version, h.pid,
       (SELECT count(*) FROM leases l WHERE l.host = h.host AND l.expires_at > now())::int, h.memory_short
FROM hosts h ORDER BY h.host
"""
_LEASES = """
SELECT item, host, extract(epoch FROM expires_at - now())::float8, extract(epoch FROM starts_at - now())::float8,
       previous, how
FROM leases WHERE host <> '' ORDER BY item
"""
_RENEW = """
UPDATE leases SET expires_at = now() + make_interval(secs => %s) WHERE host = %s RETURNING item, starts_at <= now()
"""
_BEAT = """
INSERT INTO hosts (host, max_sessions, heartbeat_at, memory_short) VALUES (%s, %s, now(), %s)
ON CONFLICT (host) DO UPDATE SET heartbeat_at = now(), stopped = FALSE, max_sessions = excluded.max_sessions,
    memory_short = excluded.memory_short
"""
_PLACEHOLDERS = """
INSERT INTO leases (item, expires_at, starts_at) SELECT unnest(%s::text[]), '-infinity', '-infinity'
ON CONFLICT (item) DO NOTHING
"""
_FREE = """
SELECT item, host FROM leases WHERE item = ANY(%s) AND (host = '' OR expires_at <= now())
ORDER BY item FOR UPDATE SKIP LOCKED
"""
_TAKE = """
UPDATE leases SET host = %s, previous = %s, how = %s, starts_at = now(), expires_at = now() + make_interval(secs => %s)
WHERE item = %s
"""
_MOVE = """
UPDATE leases SET host = %s, previous = %s, how = 'moved', starts_at = now() + make_interval(secs => %s),
       expires_at = now() + make_interval(secs => %s)
WHERE item = %s
"""
_SHARE = """
INSERT INTO listings (repo, item, data, label, history, state) VALUES (%s, %s, %s, %s, %s, %s)
ON CONFLICT (repo, item) DO UPDATE
SET data = excluded.data, label = excluded.label, state = excluded.state, history = listings.history OR excluded.history
"""


class PostgresCluster(ClusterPort):
    """`ClusterPort` over the tables of the state store's schema, on a connection of its own.

    That connection carries the repository locks (session-level: they go with a dead host's
    connection) and is used at least once per renewal; the server ends it when it sits idle past
    the lease's expiry (`idle_session_timeout`), so a host cut off from the database loses its
    repository locks no later than its leases. A lost connection loses the locks with it: the next
    `poll_lock` takes them again if no other host did.
    """

    def __init__(self, dsn: str, *, host: str, max_sessions: int, timing: LeaseTiming) -> None:
        self._host = host
        self._max_sessions = max_sessions
        self._timing = timing
        idle_ms = int(timing.expiry_seconds * 1000)
        self._db = PgConnection(
            dsn,
            session=(f"SET idle_session_timeout = {idle_ms}",),
            on_reconnect=self._forget,
            application_name=f"the-loop cluster {host}",
        )
        self._locked: set[RepoRef] = set()

    @property
    def host(self) -> str:
        return self._host

    @property
    def shared(self) -> bool:
        return True

    def close(self) -> None:
        self._db.close()

    def _forget(self) -> None:
        self._locked.clear()  # a new connection holds no lock

    def join(self, *, pid: int, version: str) -> None:
        def work(db: Session) -> None:
            db.run(_BEAT, (self._host, self._max_sessions, False))  # its first renewal says its memory
            db.run("UPDATE hosts SET pid = %s, version = %s WHERE host = %s", (pid, version, self._host))

        self._db.call(work)

    def renew(self, *, memory_short: bool = False) -> Held:
        def work(db: Session) -> list[tuple[Any, ...]]:
            db.run(_BEAT, (self._host, self._max_sessions, memory_short))
            return db.run(_RENEW, (self._timing.expiry_seconds, self._host))

        rows = self._db.call(work)
        return Held(frozenset(WorkItemRef.parse(item) for item, started in rows if started))

    def leave(self) -> None:
        self._db.call(lambda db: db.run("UPDATE hosts SET stopped = TRUE WHERE host = %s", (self._host,)))

    def hosts(self) -> list[HostView]:
        return [self._view(row) for row in self._db.call(lambda db: db.run(_HOSTS))]

    def _view(self, row: tuple[Any, ...]) -> HostView:
        host, max_sessions, age, stopped, version, pid, leases, memory_short = row
        alive = age < self._timing.expiry_seconds
        state = HostState.STOPPED if stopped else HostState.ALIVE if alive else HostState.LOST
        return HostView(host, max_sessions, leases, max(0.0, age), state, version, pid, memory_short)

    def leases(self) -> list[Lease]:
        return [
            Lease(WorkItemRef.parse(item), host, expires, max(0.0, starts), previous, Handover(how))
            for item, host, expires, starts, previous, how in self._db.call(lambda db: db.run(_LEASES))
        ]

    def place(self, items: Iterable[WorkItemRef], placement: Placement | None = None) -> list[Lease]:
        wanted = list(dict.fromkeys(str(item) for item in items))  # in the order given: the first waited longest
        placing = placement or Placement()
        return self._db.call(lambda db: self._place(db, wanted, placing)) if wanted else []

    def _place(self, db: Session, wanted: list[str], placing: Placement) -> list[Lease]:
        db.run(_PLACEHOLDERS, (wanted,))
        free = db.run(_FREE, (wanted,))  # locked until this transaction ends; rows others hold are skipped
        if not free:
            return []
        order = {item: index for index, item in enumerate(wanted)}
        free = sorted(free, key=lambda row: order[row[0]])
        hosts = {view.host: view for view in (self._view(row) for row in db.run(_HOSTS))}
        made: list[Lease] = []
        for item, previous in free:
            chosen = placing.host_for(WorkItemRef.parse(item), hosts.values(), placer=self._host, timing=self._timing)
            if chosen is None:
                continue  # it waits; a later item may go where this one may not (memory, its conversation's host)
            how = Handover.TAKEN_OVER if previous else Handover.PLACED
            db.run(_TAKE, (chosen, previous, how.value, self._timing.expiry_seconds, item))
            hosts[chosen] = replace(hosts[chosen], leases=hosts[chosen].leases + 1)
            made.append(Lease(WorkItemRef.parse(item), chosen, self._timing.expiry_seconds, 0.0, previous, how))
        return made

    def release(self, item: WorkItemRef) -> None:
        self._db.call(lambda db: db.run("DELETE FROM leases WHERE item = %s AND host = %s", (str(item), self._host)))

    def hand_over(self, item: WorkItemRef, to: str) -> Lease:
        deadline, expiry = self._timing.renew_deadline_seconds, self._timing.expiry_seconds

        def work(db: Session) -> None:
            rows = db.run("SELECT host FROM leases WHERE item = %s AND expires_at > now() FOR UPDATE", (str(item),))
            if not rows or rows[0][0] != self._host:
                raise LeaseLost(str(item), holder=rows[0][0] if rows else "")
            hosts = {view.host: view for view in (self._view(row) for row in db.run(_HOSTS))}
            if to == self._host or to not in hosts or hosts[to].state is not HostState.ALIVE:
                known = ", ".join(h for h, v in hosts.items() if v.state is HostState.ALIVE and h != self._host)
                raise ValueError(f"host {to!r} is not another live host of this cluster (live: {known or 'none'})")
            # the receiver starts once this host's own trust in the lease has surely run out
            db.run(_MOVE, (to, self._host, deadline, deadline + expiry, str(item)))

        self._db.call(work)
        return Lease(item, to, deadline + expiry, deadline, self._host, Handover.MOVED)

    def poll_lock(self, repo: RepoRef) -> bool:
        def work(db: Session) -> bool:
            if repo in self._locked:
                db.run("SELECT 1")  # the lock lives as long as the connection: prove it still does
                return repo in self._locked  # a reconnect on the way forgot it
            return bool(db.run("SELECT pg_try_advisory_lock(%s)", (_lock_key(repo),))[0][0])

        taken = self._db.call(work)
        if taken:
            self._locked.add(repo)
        return taken

    def share(self, repo: RepoRef, listed: Sequence[Listed], departed: Sequence[Departed]) -> None:
        key = _repo_key(repo)
        rows = [(key, str(e.item.ref), encode_item(e.item), e.label, e.history, ItemState.OPEN.value) for e in listed]
        rows += [(key, str(d.item), "{}", "", False, d.state.value) for d in departed]

        def work(db: Session) -> None:
            for row in rows:
                db.run(_SHARE, row)
            db.run("DELETE FROM listings WHERE repo = %s AND NOT (item = ANY(%s))", (key, [row[1] for row in rows]))

        self._db.call(work)

    def shared_listing(self, repo: RepoRef) -> Shared:
        select = "SELECT item, data, label, history, state FROM listings WHERE repo = %s"
        rows = self._db.call(lambda db: db.run(select, (_repo_key(repo),)))
        with self._db.decoding():
            listed = [Listed(decode_item(data), label, history) for _, data, label, history, state in rows
                      if state == ItemState.OPEN.value]  # fmt: skip
            departed = [Departed(WorkItemRef.parse(item), ItemState(state)) for item, _, _, _, state in rows
                        if state != ItemState.OPEN.value]  # fmt: skip
        return Shared(tuple(sorted(listed, key=lambda e: e.item.ref)), tuple(sorted(departed, key=lambda d: d.item)))


def _repo_key(repo: RepoRef) -> str:
    return f"{repo.host}/{repo.owner}/{repo.name}"


def _lock_key(repo: RepoRef) -> int:
    """A 64-bit advisory lock key of the repository's own (a collision would only make one host
    read both repositories)."""
    digest = hashlib.sha256(f"the-loop poll {_repo_key(repo)}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)
