"""The fleet page of a two-host cluster (PostgreSQL, the GitHub stand-in), in
Debian's Chromium — a host killed shows lost, then its items on the other host, without a reload."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.e2e.browser import browser, screenshot
from tests.e2e.cluster_rig import Cluster, Host, cluster
from tests.github_standin.rigs import standin
from tests.tmux_support import wait_for

__all__ = ["browser", "cluster", "standin"]
pytestmark = [pytest.mark.browser, pytest.mark.gh, pytest.mark.tmux]
TOKEN = "cluster-page-token"


def _address(host: Host) -> str:
    assert host.poller is not None
    poller = host.poller
    found = wait_for(lambda: re.search(r"the fleet page: (http://\S+/)", poller.stderr), what="the page's address")
    return str(found.group(1))


def test_a_host_killed_shows_lost_then_its_items_on_the_other_host(cluster: Cluster, browser: Any) -> None:
    a, b = cluster.add("host-a"), cluster.add("host-b")
    for host in (a, b):
        host.loop.extra["ui"] = {"enabled": True, "port": 0, "token": TOKEN}
    cluster.started()
    refs = cluster.issues(4)
    wait_for(lambda: len(a.sessions()) + len(b.sessions()) == 4, timeout=60, what="four sessions")
    its = [ref for ref, holder in cluster.holders().items() if holder == "host-b"]
    assert its, "host-b holds items"
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    page.set_extra_http_headers({"Authorization": f"Bearer {TOKEN}"})  # a script's way in, from the browser
    page.goto(_address(a))
    page.wait_for_selector("#live.ok")
    assert page.locator("tr[data-host='host-b'] .tag").inner_text() == "alive"
    page.evaluate("window.__notReloaded = true")

    b.kill()

    page.wait_for_selector("tr[data-host='host-b'] .tag.bad", timeout=30_000)
    assert page.locator("tr[data-host='host-b'] .tag").inner_text() == "lost"
    for ref in its:
        page.wait_for_selector(f"tr[data-item='{ref}'] >> td:nth-child(2) >> text=host-a", timeout=60_000)
    assert page.evaluate("window.__notReloaded") is True
    assert len(refs) == page.locator("table.items tbody tr").count()
    screenshot(page, "cluster")
