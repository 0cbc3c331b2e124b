"""The page's costs over real HTTP: `/api/fleet` gives each item's running total and the last 14 days,
`/` the panel and the totals, under the page's Content-Security-Policy (no inline script or style:
the chart is drawn by the page's own script, served from its origin)."""

from __future__ import annotations

import json
import re
import socket
from datetime import timedelta
from pathlib import Path

from app.web.http import PageServer
from domain.ledger import Ledger
from domain.refs import WorkItemRef
from domain.spending import TurnCost
from domain.usage import TurnUsage
from tests.service.test_fleet_page import TOKEN, _page
from tests.service.world import REPO, World

TURN = TurnUsage(input=1000, output=500, cache_write=0, cache_read=2000, model="claude-x-1")


def _get(server: PageServer, path: str) -> tuple[str, bytes]:
    """The head and the whole body (the page closes the connection after one answer)."""
    with socket.create_connection(server.address, timeout=30) as client:
        host = f"127.0.0.1:{server.address[1]}"
        client.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode())
        found = b""
        while chunk := client.recv(65536):
            found += chunk
    head, _, body = found.partition(b"\r\n\r\n")
    return head.decode("latin-1"), body


def test_the_fleet_json_and_html_say_each_items_total_and_the_days_costs_estimated(tmp_path: Path) -> None:
    world = World()
    ref, other = WorkItemRef(REPO, 1), WorkItemRef(REPO, 2)
    for item in (ref, other):
        world.store.save_ledger(Ledger(item=item, baseline_at=world.clock.now()))
    now = world.clock.now()
    for n, ago in enumerate([0, 1, 1, 20]):  # days back: today, yesterday twice, before the 14 days
        cost = TurnCost(ref, str(n), now - timedelta(days=ago), "claude", usage=TURN, micro_dollars=3000)
        world.store.record_cost(cost)
    server = PageServer(host="127.0.0.1", port=0, handler=_page(world, tmp_path / "events.jsonl"))
    server.start()
    try:
        _, data = _get(server, "/api/fleet")
        head, html = _get(server, "/")
    finally:
        server.stop()

    shown = json.loads(data)
    cost = {row["work_item"]: row["cost"] for row in shown["items"]}
    assert cost[str(ref)]["usd_estimated"] == 0.012 and cost[str(other)] is None
    assert shown["costs"]["estimated"] is True
    assert [(d["key"], d["usd_estimated"]) for d in shown["costs"]["days"][-2:]] == [
        ("2026-11-29", 0.006),
        ("2026-11-30", 0.003),
    ]
    assert [t["key"] for t in shown["costs"]["top"]] == [str(ref)]
    page = html.decode()
    assert "Content-Security-Policy: default-src 'self';" in head
    assert '<td data-cost="$0.0120 est."' in page and 'data-chart="days"' in page
    assert '<tr data-day="2026-11-29" data-micro="6000"' in page
    # the policy runs no inline script and applies no inline style: the chart is page.js's
    assert re.findall(r"<script[^>]*>", page) == ['<script src="/static/page.js" defer>']
    assert " style=" not in page
