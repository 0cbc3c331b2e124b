"""A parked item and a blocked one show as such everywhere the-loop shows an item: the page's rows,
counts and item view (with its held comments, and the failed turn in the comment's journey),
`status`'s "needs attention", `sessions list`, the status reply and `why` — one word, one line."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qsl, quote

from adapters.eventlog.reader import Tail
from app.cli.read_views import COLUMNS, session_row, status_output
from app.usecases.cycle.daemon import HEARTBEAT
from app.usecases.views.attention import attention
from app.usecases.views.fleet import Fleet
from app.usecases.views.poller_status import poller_status
from app.usecases.views.why import comment_story
from app.web.auth import Guard
from app.web.feed import Feed
from app.web.http import Request, Response
from app.web.page import FleetPage
from domain.ledger import Resolution
from domain.receipts import ReceiptKind
from domain.refs import WorkItemRef
from tests.fakes.receipts import FakeReceipts
from tests.service.world import World

TOKEN = "t0ken-for-the-page"
BEARER = {"authorization": f"Bearer {TOKEN}"}


def _receipts(world: World) -> FakeReceipts:
    assert isinstance(world.receipts, FakeReceipts)
    return world.receipts


def _parked(world: World) -> tuple[WorkItemRef, str, str]:
    """An item whose delivered comment's turn failed on a rate limit, and a comment that came after:
    the item, the failed comment's id, the held one's."""
    ref = world.watched()
    _receipts(world).plant(world.record(ref).spawn_id, ReceiptKind.TURN_ENDED)
    failed = world.comment(ref, "please fix the flaky test")
    world.cycle()
    assert world.ledger(ref).resolved[failed.id].kind is Resolution.DELIVERED
    _receipts(world).plant(world.record(ref).spawn_id, ReceiptKind.TURN_FAILED, detail="rate_limit")
    world.cycle()
    held = world.comment(ref, "and also this")
    world.cycle()
    assert world.record(ref).park is not None
    return ref, failed.id, held.id


def _blocked(world: World) -> WorkItemRef:
    """An item (#2) whose agent asked for permission to run Bash, the request posted on the item."""
    ref = world.watched(2)
    spawn = world.record(ref).spawn_id
    _receipts(world).plant(spawn, ReceiptKind.TOOL)
    asked = json.dumps({"command": "ls", "description": "List"})
    _receipts(world).plant(spawn, ReceiptKind.BLOCKED, tool="Bash", tool_input=asked)
    world.clock.advance(3)
    world.cycle()
    world.cycle()
    assert [r.number for r in world.record(ref).requests] == [1]
    return ref


def _page(world: World, log: Path) -> FleetPage:
    assert world.cluster is not None
    fleet = Fleet(
        admin=world.admin(), uow=world.uow, cluster=world.cluster, tmux=world.tmux,
        heartbeat=lambda: world.store.meta().get(HEARTBEAT),
    )  # fmt: skip
    return FleetPage(fleet=fleet, feed=Feed(log, Tail), guard=Guard(TOKEN), now=world.clock.now, where="here")


def _get(page: FleetPage, path: str) -> str:
    url, _, query = path.partition("?")
    answer = page(Request("GET", url, dict(parse_qsl(query)), BEARER))
    assert isinstance(answer, Response) and answer.status == 200
    return answer.body.decode()


def _row(world: World, tmp_path: Path) -> dict[str, object]:
    (row,) = json.loads(_get(_page(world, tmp_path / "events.jsonl"), "/api/fleet"))["items"]
    return dict(row)


def _status_text(world: World) -> str:
    status = poller_status(holder=None, heartbeat_text=None, now=world.clock.now(), interval_seconds=60)
    return status_output(status, {}, json_out=False, attention=attention(world.store))


def test_a_parked_item_is_parked_on_the_page_with_until_when_and_why_not_a_green_idle(tmp_path: Path) -> None:
    world = World()
    ref, _, _ = _parked(world)

    row = _row(world, tmp_path)

    until = world.record(ref).park.until  # type: ignore[union-attr]
    assert row["state"] == "parked"
    detail = row["state_detail"]
    assert isinstance(detail, dict)
    assert (detail["tone"], detail["until"], detail["why"], detail["held"]) == (
        "attention", until.isoformat() if until else None, "a rate limit", 1
    )  # fmt: skip
    html = _get(_page(world, tmp_path / "events.jsonl"), "/")
    assert 'data-state="parked" data-tone="attention"' in html and 'data-count="parked">1<' in html
    assert 'data-state="idle"' not in html


def test_a_parked_items_view_lists_its_held_comment_and_its_failed_turn_is_not_green(tmp_path: Path) -> None:
    world = World()
    ref, failed, held = _parked(world)
    log = tmp_path / "events.jsonl"
    log.write_text("".join(json.dumps(record) + "\n" for record in world.events.records))

    html = _get(_page(world, log), f"/item?ref={quote(str(ref), safe='')}")

    assert 'data-state-line="parked"' in html
    waiting = html.split('<ul class="held">')[1].split("</ul>")[0]
    assert f'data-held="{held}"' in waiting and "parked (rate_limit) until" in waiting
    journey = html.split(f'data-comment="{failed}"')[1].split("</ol>")[0]
    assert '<li class="bad">turn failed: rate_limit</li><li class="warn">parked: until' in journey


def test_a_blocked_item_is_blocked_on_its_request_on_the_page(tmp_path: Path) -> None:
    world = World()
    _blocked(world)

    detail = _row(world, tmp_path)["state_detail"]

    assert isinstance(detail, dict)
    assert (detail["state"], detail["request"], detail["why"]) == ("blocked", 1, "on permission Bash")


def test_status_names_the_parked_and_the_blocked_item_under_needs_attention() -> None:
    world = World()
    blocked = _blocked(world)  # first: a receipt planted after the other's cycles reads as older than its spawn
    parked, _, _ = _parked(world)
    world.watched(3)  # a third, working: not listed

    lines = _status_text(world).splitlines()

    start = lines.index("needs attention: 2")
    assert lines[start + 1].startswith(f"  {parked}  parked: a rate limit, until ")
    assert lines[start + 2].startswith(f"  {blocked}  blocked: request 1, since ")  # the store alone: no receipt read
    assert len(lines) == start + 3


def test_sessions_list_shows_the_same_words_in_its_item_state_column() -> None:
    world = World()
    blocked = _blocked(world)  # first: a receipt planted after the other's cycles reads as older than its spawn
    parked, _, _ = _parked(world)

    rows = {view.record.item: session_row(view) for view in world.admin().listed()}

    column = COLUMNS.index("ITEM STATE")
    assert rows[parked][column].startswith("parked: a rate limit, until ")
    assert rows[blocked][column].startswith("blocked: on permission Bash, request 1, since ")
    (shown,) = [view.as_json() for view in world.admin().listed() if view.record.item == parked]
    assert shown["item_state"]["state"] == "parked"


def test_the_status_reply_says_the_items_state_as_every_view_does() -> None:
    world = World()
    blocked = _blocked(world)  # first: a receipt planted after the other's cycles reads as older than its spawn
    parked, _, _ = _parked(world)

    for ref in (parked, blocked):
        world.comment(ref, "the-loop status")
    world.cycle()

    replies = [body for _, body in world.tracker.posted if "status of" in body]
    assert any(f"status of {parked}" in r and "- State: parked: a rate limit, until " in r for r in replies)
    assert any(f"status of {blocked}" in r and "- State: blocked: on permission Bash, request 1" in r for r in replies)


def test_why_says_the_state_of_a_held_comments_item() -> None:
    world = World()
    ref, _, held = _parked(world)

    story = comment_story(world.store, held, item=ref, records=world.events.records)

    assert story is not None and story.item_state is not None
    assert story.item_state.line(world.clock.now()).startswith("parked: a rate limit, until ")
    assert story.as_json()["item_state"]["state"] == "parked"
