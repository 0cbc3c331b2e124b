"""Which `Host` the page answers. A browser sends the name it looked up: another site can point a
name of its own at 127.0.0.1 (DNS rebinding) and read a page that answers any name, token or not,
as that site's own origin. So only names that are this machine's, or the operator's, are answered."""

from __future__ import annotations

from collections.abc import Iterable
from http import HTTPStatus

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
DEFAULT_PORT = 80  # what `http://name/` means: a browser then sends the name alone


def answered_hosts(bound: tuple[str, int], allowed: Iterable[str]) -> frozenset[str]:
    """Every `Host` value answered, in lower case: the bound address, `localhost`, `127.0.0.1` and
    `[::1]`, each with the bound port (alone too when that port is 80); a name of `allowed` with the
    bound port or none (a proxy in front on its own default port); an `allowed` entry with a port,
    with that port only."""
    address, port = bound
    own = {f"[{address}]" if ":" in address else address, *LOOPBACK_NAMES}
    hosts = {f"{name}:{port}" for name in own} | (own if port == DEFAULT_PORT else set())
    for entry in (entry.strip().lower() for entry in allowed):
        hosts |= {entry} if _has_port(entry) else {entry, f"{entry}:{port}"}
    return frozenset(host.lower() for host in hosts)


def refusal(host: str | None, answered: frozenset[str]) -> HTTPStatus | None:
    """None when a request naming `host` is answered; else the status refusing it (no `Host`: 400,
    as HTTP/1.1 asks)."""
    if host is None:
        return HTTPStatus.BAD_REQUEST
    return None if host.strip().lower() in answered else HTTPStatus.MISDIRECTED_REQUEST


def _has_port(entry: str) -> bool:
    return entry.rpartition(":")[2].isdigit() and (not entry.startswith("[") or "]:" in entry)
