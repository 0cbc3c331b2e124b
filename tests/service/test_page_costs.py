"""What the fleet page shows of the turns' costs, from the store's cost rows alone: each item's running
total, a delivered comment's turn on its journey, the last 14 days by day and the dearest items —
and what a refresh reads of the store to show them."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

from app.usecases.views.page_costs import FULL_EVERY, OVERLAP
from app.web.page import FleetPage
from domain.ledger import Ledger
from domain.refs import WorkItemRef
from domain.spending import TurnCost
from domain.usage import TurnUsage
from tests.fakes.clock import FakeClock
from tests.service.test_fleet_page import BEARER, _get, _page
from tests.service.world import REPO, World

# 1,000 in + 500 out + 0 cache write + 2,000 cache read, at $1 / $2 / $3 / $0.5 a million: $0.003
TURN = TurnUsage(input=1000, output=500, cache_write=0, cache_read=2000, model="claude-x-1")


def _turn(
    world: World, ref: WorkItemRef, comment: str, *, ago: timedelta = timedelta(0), micro: int | None = 3000,
    usage: TurnUsage | None = TURN,
) -> None:  # fmt: skip
    ended = world.clock.now() - ago
    world.store.record_cost(TurnCost(ref, comment, ended, "claude", "alice", usage=usage, micro_dollars=micro))


def _known(world: World, *numbers: int) -> list[WorkItemRef]:
    refs = [WorkItemRef(REPO, n) for n in numbers]
    for ref in refs:
        world.store.save_ledger(Ledger(item=ref, baseline_at=world.clock.now()))
    return refs


def _cell(html: str, ref: WorkItemRef) -> str:
    row = html.split(f'<tr data-item="{ref}">')[1].split("</tr>", maxsplit=1)[0]
    return row.split('data-cost="')[1].split("</td>")[0].split(">", 1)[1]


def test_each_items_row_shows_its_running_total_estimated_or_its_tokens_or_a_dash(tmp_path: Path) -> None:
    world = World()
    priced, tokens_only, unknown, untouched = _known(world, 1, 2, 3, 4)
    _turn(world, priced, "1", ago=timedelta(days=40))  # older than the panel's days: still in its total
    _turn(world, priced, "2")
    _turn(world, tokens_only, "3", micro=None)
    _turn(world, unknown, "4", usage=None, micro=None)
    page = _page(world, tmp_path / "events.jsonl")

    html = _get(page, "/", **BEARER).body.decode()
    rows = {r["work_item"]: r["cost"] for r in json.loads(_get(page, "/api/fleet", **BEARER).body)["items"]}

    assert "<th>cost (estimated)</th>" in html
    assert [_cell(html, ref) for ref in (priced, tokens_only, unknown, untouched)] == [
        "$0.0060 est.",
        "3,500 tokens",
        "—",
        "—",
    ]
    assert rows[str(priced)]["usd_estimated"] == 0.006 and rows[str(priced)]["turns"] == 2
    assert rows[str(tokens_only)]["tokens"] == 3500 and rows[str(tokens_only)]["tokens_only"] == 1
    assert rows[str(unknown)]["usage_unknown"] == 1
    assert rows[str(untouched)] is None


def test_a_delivered_comments_journey_shows_what_its_turn_cost(tmp_path: Path) -> None:
    world = World()
    ref = world.watched(1)
    log = tmp_path / "events.jsonl"
    log.write_text("".join(
        json.dumps({"ts": f"2026-11-30T08:0{n}:00+00:00", "event": e, "work_item": str(ref), "comment_id": c})
        + "\n"
        for n, (e, c) in enumerate([("dispatch.queued", "7"), ("session.turn_finished", "7"),
                                    ("dispatch.queued", "8"), ("session.turn_finished", "8"),
                                    ("dispatch.queued", "9"), ("session.turn_finished", "9"),
                                    ("dispatch.queued", "10")])
    ))  # fmt: skip
    _turn(world, ref, "7")
    _turn(world, ref, "8", micro=None)
    _turn(world, ref, "9", usage=None, micro=None)
    page = _page(world, log)

    html = _get(page, f"/item?ref={quote(str(ref), safe='')}", **BEARER).body.decode()

    def cost(comment: str) -> str:
        after = html.split(f'<li data-comment="{comment}">')[1].split("</ol>", 1)[1].split("</li>", 1)[0]
        return after.split('class="turn-cost">')[1].split("</p>")[0] if "turn-cost" in after else ""

    assert cost("7") == "its turn: 1,000 in · 500 out · 0 cache write · 2,000 cache read · $0.0030 est."
    assert (
        cost("8")
        == "its turn: 1,000 in · 500 out · 0 cache write · 2,000 cache read · tokens only (no price for claude-x-1)"
    )
    assert cost("9") == "its turn: usage unknown"
    assert cost("10") == ""  # queued, no turn yet
    assert "3 turns cost $0.0030 est. (+1 unpriced, 1 unknown) · " in html


def test_the_costs_panel_shows_the_last_14_days_by_day_and_the_five_dearest_items(tmp_path: Path) -> None:
    world = World()
    refs = _known(world, *range(1, 8))
    for n, ref in enumerate(refs):  # item n+1 spends n+1 turns of $0.003, one a day back from today
        for day in range(n + 1):
            _turn(world, ref, f"{n}-{day}", ago=timedelta(days=day))
    _turn(world, refs[0], "long ago", ago=timedelta(days=14), micro=1_000_000)  # before the first of the 14 days
    page = _page(world, tmp_path / "events.jsonl")

    html = _get(page, "/", **BEARER).body.decode()
    costs = json.loads(_get(page, "/api/fleet", **BEARER).body)["costs"]

    panel = html.split('<section id="costs">')[1].split("</section>")[0]
    days = [(d["key"], d["turns"]) for d in costs["days"]]
    assert days[0] == ("2026-11-17", 0) and days[-1] == ("2026-11-30", 7) and len(days) == 14
    assert [turns for _, turns in days[-7:]] == [1, 2, 3, 4, 5, 6, 7]
    assert panel.count("<tr data-day=") == 14 and 'data-micro="21000"' in panel  # today: 7 turns
    assert 'data-chart="days"' in panel and "estimated" in panel.split("</h2>")[0]
    assert [t["key"] for t in costs["top"]] == [str(ref) for ref in refs[:1:-1]]  # 7, 6, 5, 4, 3
    top = panel.split('<ol class="top">')[1].split("</ol>")[0]
    assert top.count("<li") == 5 and top.index(str(refs[6])) < top.index(str(refs[2]))
    assert "$0.0210 est." in top


def test_the_panel_draws_no_bars_when_no_turn_of_the_days_said_its_usage(tmp_path: Path) -> None:
    world = World()
    (ref,) = _known(world, 1)
    page = _page(world, tmp_path / "events.jsonl")
    empty = _get(page, "/", **BEARER).body.decode()
    _turn(world, ref, "1", usage=None, micro=None)
    _turn(world, ref, "2", usage=None, micro=None)

    unknown = _get(page, "/", **BEARER).body.decode()

    assert "No turn ended in the last 14 days." in empty and "data-chart" not in empty
    assert "2 turns ended in the last 14 days; none said its usage." in unknown and "data-chart" not in unknown


def _reads(page: FleetPage, world: World) -> list[datetime | None]:
    """Each `since` the page's reads of the cost rows asked for."""
    asked: list[datetime | None] = []
    costs = world.store.costs

    def counted(*, since: datetime | None = None, item: WorkItemRef | None = None) -> list[TurnCost]:
        asked.append(since)
        return costs(since=since, item=item)

    world.store.costs = counted  # type: ignore[method-assign]
    return asked


def test_a_refresh_reads_only_the_cost_rows_ended_lately_and_counts_each_once(tmp_path: Path) -> None:
    world = World()
    (ref,) = _known(world, 1)
    _turn(world, ref, "old", ago=timedelta(days=30))
    _turn(world, ref, "1")
    start = world.clock.now()
    page = _page(world, tmp_path / "events.jsonl")
    asked = _reads(page, world)

    _get(page, "/", **BEARER)  # the first: every row
    world.clock.advance(60)
    _turn(world, ref, "2")
    _get(page, "/", **BEARER)
    _turn(world, ref, "late", ago=OVERLAP / 2)  # another host's row, written after the newest was seen
    _get(page, "/", **BEARER)
    again = _get(page, "/", **BEARER).body.decode()  # the late row read twice, counted once
    world.clock.advance(FULL_EVERY.total_seconds())
    shown = json.loads(_get(page, "/api/fleet", **BEARER).body)

    later = start + timedelta(seconds=60)
    assert asked == [None, start - OVERLAP, later - OVERLAP, later - OVERLAP, None]
    assert _cell(again, ref) == "$0.0120 est."
    assert shown["items"][0]["cost"]["turns"] == 4 and shown["costs"]["days"][-1]["turns"] == 3


def test_the_panels_days_move_on_at_midnight_utc_though_no_turn_ended(tmp_path: Path) -> None:
    world = World(clock=FakeClock(datetime(2026, 11, 30, 23, 50, tzinfo=UTC)))
    first, second = _known(world, 1, 2)
    _turn(world, first, "1", ago=timedelta(days=13), micro=9000)  # the first of the 14 days
    _turn(world, second, "2", micro=3000)
    page = _page(world, tmp_path / "events.jsonl")
    before = json.loads(_get(page, "/api/fleet", **BEARER).body)["costs"]

    world.clock.advance(timedelta(minutes=15).total_seconds())  # 00:05 the next day: no read of every row yet
    after = json.loads(_get(page, "/api/fleet", **BEARER).body)

    assert [t["key"] for t in before["top"]] == [str(first), str(second)]
    assert (after["costs"]["days"][0]["key"], after["costs"]["days"][-1]["key"]) == ("2026-11-18", "2026-12-01")
    assert sum(d["turns"] for d in after["costs"]["days"]) == 1 and after["costs"]["days"][-2]["turns"] == 1
    assert [t["key"] for t in after["costs"]["top"]] == [str(second)]
    assert after["items"][0]["cost"]["usd_estimated"] == 0.009  # its running total keeps it
