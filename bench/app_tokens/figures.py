"""What the soak counts: each host's tokens per installation and its requests GitHub refused, the
daemons' events that say a call failed, each comment's deliveries, and where an issued token's text
turned up."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import psycopg

from adapters.github.tracker import DEFAULT_REACTIONS
from bench.app_tokens.soak import CLUSTER, INSTALLATIONS, LITE, Form, Soak
from domain.events import Event
from domain.ledger import Resolution
from domain.model import Reaction
from tests.github_standin.app import TOKEN_PREFIX, Exchange, TokenUse

# every event the daemon says a failed GitHub call with, and those of a delivery or a cycle failing
FAILED = {
    Event.POLL_SOURCE_FAILED, Event.POLL_ITEM_FAILED, Event.POLL_COMMENT_FAILED, Event.POLL_GIVEUP_REPORT_FAILED,
    Event.NOTICE_FAILED, Event.REACTION_FAILED, Event.AUTHORIZE_LOOKUP_FAILED, Event.DISPATCH_FAILED,
    Event.POLLER_CYCLE_FAILED, Event.POLLER_FAILED,
}  # fmt: skip
CONFIRMED = DEFAULT_REACTIONS[Reaction.SUCCEEDED]  # once per delivered comment


@dataclass(frozen=True, slots=True)
class Tokens:
    """One host's tokens of one installation, and its requests made with them."""

    host: str
    setup: str
    installation: int
    issued: int
    expiries: int  # tokens that came within the margin of expiring before the next was asked
    early: int  # replaced with more than the margin left: a refresh no expiry called for
    requests: int
    refused: int  # answered 401
    unanswered: int  # refused and never asked again with success

    @property
    def sound(self) -> bool:
        return self.issued <= self.expiries + 1 and self.early == 0 and self.unanswered == 0


@dataclass(frozen=True, slots=True)
class Comments:
    setup: str
    posted: int
    lost: int  # no delivery said, or not delivered in the ledger, or never confirmed by a reaction
    duplicated: int  # said delivered, or confirmed, more than once
    forwarded: int  # `poll.comment_forwarded` events
    in_ledger: int  # resolved as delivered
    confirmed: int  # its success reaction at the stand-in


@dataclass
class Figures:
    form: Form
    seconds: float
    replaced: int  # the fewest replacements of an installation's token at a steady host
    tokens: list[Tokens]
    comments: list[Comments]
    failed: dict[str, list[str]]  # host: each failure event's name and cause
    leaks: list[str]  # where an issued token's text was found

    @property
    def sound(self) -> bool:
        return (
            self.replaced >= self.form.expiries
            and all(t.sound for t in self.tokens)
            and all(c.lost == c.duplicated == 0 for c in self.comments)
            and not any(self.failed.values())
            and not self.leaks
        )

    def as_json(self) -> dict[str, Any]:
        return asdict(self) | {"sound": self.sound}


def replaced(soak: Soak, since: float) -> int:
    """The fewest replacements since `since` (monotonic) any installation's token had at a steady host:
    the SQLite host, and the cluster's reader of its repository (whichever of its hosts replaced it
    most), which call on it every cycle."""
    steady = [("lite",), tuple(soak.cluster.hosts)]
    return min(
        max(sum(1 for e in soak.app.exchanges_of(number, host) if e.at >= since) for host in hosts)
        for hosts in steady
        for number in INSTALLATIONS
    )


def tokens(soak: Soak, ended: float) -> list[Tokens]:
    app, margin = soak.app, soak.form.margin
    rows = []
    for host in soak.hosts:
        for number in INSTALLATIONS:
            handed = app.exchanges_of(number, host)
            uses = [u for u in app.uses if u.client == host and u.installation == number]
            rows.append(
                Tokens(
                    host, LITE if host == "lite" else CLUSTER, number, len(handed),
                    _expiries(handed, app.token_seconds - margin, ended),
                    sum(1 for e in handed[1:] if e.previous_left is not None and e.previous_left > margin),
                    len(uses), sum(u.refused for u in uses), _unanswered(uses),
                )
            )  # fmt: skip
    return rows


def _expiries(handed: list[Exchange], usable: float, ended: float) -> int:
    """The tokens that came to their end (within the margin of expiring, `usable` seconds after they
    were handed out) before the next one was asked, or before the daemon stopped for the last one."""
    nexts = [e.at for e in handed[1:]] + [ended]
    return sum(1 for e, following in zip(handed, nexts, strict=True) if following >= e.at + usable)


def _unanswered(uses: list[TokenUse]) -> int:
    """Requests refused (401) that were not asked again and taken afterwards (the same method and
    path, by the same host on the same installation; in the same cycle, or the next one's)."""
    return sum(
        1 for i, use in enumerate(uses) if use.refused and not any(_again(use, later) for later in uses[i + 1 :])
    )


def _again(refused: TokenUse, later: TokenUse) -> bool:
    return not later.refused and (later.method, later.path) == (refused.method, refused.path)


def comments(soak: Soak) -> list[Comments]:
    reactions = Counter(str(cid) for _, cid, content in soak.world.reactions if content == CONFIRMED)
    rows = []
    for setup in (LITE, CLUSTER):
        posted = [p.comment_id for p in soak.posted if p.setup == setup]
        hosts = [loop for name, loop in soak.hosts.items() if (name == "lite") == (setup == LITE)]
        forwarded = Counter(
            str(e.get("comment_id")) for loop in hosts for e in loop.events()
            if e["event"] == Event.POLL_COMMENT_FORWARDED.value
        )  # fmt: skip
        ledger = _delivered(soak, setup)
        lost = sum(1 for c in posted if not (forwarded[c] and c in ledger and reactions[c]))
        duplicated = sum(1 for c in posted if forwarded[c] > 1 or reactions[c] > 1)
        rows.append(
            Comments(setup, len(posted), lost, duplicated, sum(forwarded[c] for c in posted),
                     sum(1 for c in posted if c in ledger), sum(reactions[c] for c in posted))
        )  # fmt: skip
    return rows


def delivered(soak: Soak) -> bool:
    """Every comment posted so far is confirmed by its reaction at the stand-in."""
    with soak.world.lock:
        confirmed = {str(cid) for _, cid, content in soak.world.reactions if content == CONFIRMED}
    return all(p.comment_id in confirmed for p in soak.posted)


def _delivered(soak: Soak, setup: str) -> set[str]:
    store = soak.store(setup)
    try:
        ledgers = [store.ledger(ref) for ref in soak.items[setup]]
    finally:
        store.close()
    return {cid for led in ledgers if led for cid, r in led.resolved.items() if r.kind is Resolution.DELIVERED}


def failed(soak: Soak) -> dict[str, list[str]]:
    names = {event.value for event in FAILED}
    return {
        host: [f"{e['event']}: {e.get('cause', '')}" for e in loop.events() if e["event"] in names]
        for host, loop in soak.hosts.items()
    }


def leaks(soak: Soak) -> list[str]:
    """Every file under each host's folder (state, logs, listings, harness records) and the PostgreSQL
    server's own files, and every row of the cluster's tables, searched for a token's text."""
    needle = TOKEN_PREFIX.encode()
    found = [str(path) for path in _files(soak.root) if needle in path.read_bytes()]
    found += [f"{soak.pg.root}/{path.relative_to(soak.pg.root)}" for path in _files(soak.pg.root / "data")
              if needle in path.read_bytes()]  # fmt: skip
    with psycopg.connect(soak.cluster.dsn, autocommit=True) as db:
        tables = [row[0] for row in db.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")]
        for table in tables:
            rows = db.execute(f'SELECT t::text FROM "{table}" t').fetchall()  # type: ignore[arg-type]
            found += [f"postgres table {table}" for (text,) in rows if TOKEN_PREFIX in text][:1]
    return found


def _files(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if path.is_file() and not path.is_symlink()]
