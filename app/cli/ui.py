"""The fleet page beside a running poller (`ui.enabled`): started with it, stopped with it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from app.cli.context import CliContext
from app.web.auth import Guard
from app.web.feed import Feed
from app.web.http import PageServer
from app.web.page import FleetPage
from domain.errors import LoopError


class PageNotServed(LoopError):
    """The page's address cannot be bound (exit status 1, before the poller starts)."""


@contextmanager
def page_served(context: CliContext, report: Callable[[str], None]) -> Iterator[PageServer | None]:
    """Serve the page while the block runs, when `ui.enabled`; say its address."""
    ui = context.settings.ui
    if not ui.enabled:
        yield None
        return
    from app.container import Tail  # the reader lives with the adapters

    container = context.container
    feed = Feed(context.settings.event_log_path, Tail)
    container.events().written = feed.poke  # the daemon's events reach the page at once
    page = FleetPage(
        fleet=container.fleet(),
        feed=feed,
        guard=Guard(ui.token.get_secret_value()),
        now=container.clock().now,
        where=f"host {context.settings.host_id}",
    )
    try:
        server = PageServer(host=ui.host, port=ui.port, handler=page, allowed_hosts=ui.allowed_hosts)
    except OSError as error:
        raise PageNotServed(
            f"the fleet page cannot bind {ui.host}:{ui.port} (ui.host, ui.port): {error.strerror}"
        ) from None
    # the log's history (up to the last 4 MB) is read now, before the first cycle: a browser opening
    # the page later costs the cycles nothing but what is new
    feed.catch_up()
    server.start()
    host, port = server.address
    report(
        f"the fleet page: http://{host}:{port}/" + (" (sign in with ui.token)" if ui.token.get_secret_value() else "")
    )
    try:
        yield server
    finally:
        server.stop()
