"""The fleet page's costs in a real browser, against a running daemon with the sandbox tracker and
the demo harness (whose turns' usage is unknown: the priced turns are written into the store as the
daemon writes a turn's cost): the bars of the last 14 days drawn by the page's script under its
Content-Security-Policy, each item's running total, a turn's cost on its comment's journey — and
all of it again, live, after the view re-renders."""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from adapters.clock import SystemClock
from domain.events import Event
from domain.spending import TurnCost
from domain.usage import TurnUsage
from tests.e2e.browser import browser, screenshot
from tests.e2e.loop_rig import Loop
from tests.tmux_support import RealTmux, real_tmux, wait_for

__all__ = ["browser", "real_tmux"]
pytestmark = [pytest.mark.browser, pytest.mark.tmux]
TOKEN = "page-token-for-the-costs-run"
TURN = TurnUsage(input=1000, output=500, cache_write=0, cache_read=2000, model="claude-x-1")


@pytest.fixture
def loop(real_tmux: RealTmux, tmp_path: Path) -> Iterator[Loop]:
    rig = Loop(tmp_path, real_tmux, harness="demo", extra={"ui": {"enabled": True, "port": 0, "token": TOKEN}})
    try:
        yield rig
    finally:
        rig.stop_all()


def _bars(page: Any) -> dict[str, float]:
    """Each day's bar, by its day, and its height as drawn."""
    drawn = page.eval_on_selector_all(
        "#costs svg rect.bar", "bars => bars.map(b => [b.dataset.day, b.getBBox().height])"
    )
    return {day: height for day, height in drawn}


def test_a_person_sees_the_days_costs_drawn_and_each_items_total_live(loop: Loop, browser: Any) -> None:
    (ref,) = loop.items(1)
    poller = loop.running_poll()
    found = wait_for(lambda: re.search(r"the fleet page: (http://\S+/)", poller.stderr), what="the page's address")
    address = str(found.group(1))
    wait_for(lambda: Event.SESSION_READY in loop.event_names(), timeout=30, what="the demo harness ready")
    loop.comment(ref, "please say hello")
    wait_for(lambda: Event.SESSION_TURN_FINISHED in loop.event_names(), timeout=30, what="the turn ended")
    store, now = loop.store(), SystemClock().now()
    for n, (days, micro) in enumerate([(0, 3000), (2, 9000), (2, 3000)]):
        store.record_cost(TurnCost(ref, f"before-{n}", now - timedelta(days=days), "demo", usage=TURN,
                                   micro_dollars=micro))  # fmt: skip
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)  # a CSP refusal is one
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(address)
    page.fill("input[name=token]", TOKEN)
    page.press("input[name=token]", "Enter")
    page.wait_for_selector("#costs svg rect.bar", state="attached")  # a day without a turn: a bar 0 high

    today, two_days_ago = (now - timedelta(days=d) for d in (0, 2))
    bars = _bars(page)
    assert len(bars) == 14 and list(bars)[-1] == f"{today:%Y-%m-%d}"
    assert bars[f"{today:%Y-%m-%d}"] == pytest.approx(bars[f"{two_days_ago:%Y-%m-%d}"] / 4, abs=1)  # $0.003, $0.012
    assert sum(1 for height in bars.values() if height) == 2
    assert "estimated" in page.locator("#costs h2").inner_text()
    assert page.locator(f"tr[data-item='{ref}'] td[data-cost]").inner_text() == "$0.0150 est."
    assert page.locator(f"#costs li[data-top='{ref}']").inner_text().startswith(f"{ref} $0.0150 est.")
    screenshot(page, "costs", part="#costs")

    page.evaluate("window.__notReloaded = true")
    store.record_cost(TurnCost(ref, "later", SystemClock().now(), "demo", usage=TURN, micro_dollars=12000))
    loop.comment(ref, "and once more")  # any event re-renders the view, drawn again
    page.wait_for_selector(f"tr[data-item='{ref}'] td[data-cost='$0.0270 est.']", timeout=30_000)
    again = _bars(page)
    assert page.evaluate("window.__notReloaded") is True
    assert again[f"{two_days_ago:%Y-%m-%d}"] == pytest.approx(again[f"{today:%Y-%m-%d}"] * 12 / 15, abs=1)

    page.goto(f"{address}item?ref={urllib.parse.quote(str(ref), safe='')}")
    turns = page.locator("li[data-comment] .turn-cost").all_inner_texts()
    assert turns and set(turns) == {"its turn: usage unknown"}, turns  # the demo harness says none
    assert errors == []
