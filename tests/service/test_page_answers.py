"""The page answers an open request — allow, deny, answer — under the same rules as its other
buttons (the token; from a browser the CSRF field and its own origin), as an event whose source is
the page; the answer reaches the hook as a GitHub answer does, and the request's comment on the
item is edited to say it was answered, how, by whom and from where."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from adapters.eventlog.reader import Tail
from app.config.settings import Settings
from app.usecases.views.fleet import Fleet
from app.web.auth import COOKIE, Guard
from app.web.feed import Feed
from app.web.http import Request, Response
from app.web.page import FleetPage
from domain.events import Event
from domain.receipts import ReceiptKind
from domain.refs import WorkItemRef
from tests.fakes.receipts import FakeReceipts
from tests.service.world import World

TOKEN = "t0ken-for-the-page"
BEARER = {"authorization": f"Bearer {TOKEN}"}
BROWSER = {"cookie": f"{COOKIE}={Guard(TOKEN).cookie_value}", "host": "127.0.0.1:8788"}
BASH = {"command": "rm -rf build", "description": "Clean the build"}
QUESTION = {
    "questions": [
        {
            "question": "Which colour?",
            "header": "Colour",
            "options": [{"label": "Red", "description": ""}, {"label": "Blue", "description": ""}],
            "multiSelect": False,
        }
    ]
}


def _page(world: World, log: Path) -> FleetPage:
    assert world.cluster is not None
    fleet = Fleet(admin=world.admin(), uow=world.uow, cluster=world.cluster, tmux=world.tmux,
                  asks=world.asks)  # fmt: skip
    return FleetPage(fleet=fleet, feed=Feed(log, Tail), guard=Guard(TOKEN), now=world.clock.now, where="here")


def _post(page: FleetPage, form: dict[str, str], **headers: str) -> Response:
    body = "&".join(f"{k}={quote(v, safe='')}" for k, v in form.items()).encode()
    answer = page(Request("POST", "/action", {}, headers, body))
    assert isinstance(answer, Response)
    return answer


def _asked(world: World, tool: str = "Bash", tool_input: dict[str, Any] | None = None) -> tuple[WorkItemRef, str]:
    """An item whose agent asks, its request posted on the item as request 1; the request's key."""
    ref = world.watched()
    spawn = world.record(ref).spawn_id
    receipts = world.receipts
    assert isinstance(receipts, FakeReceipts)
    receipts.plant(spawn, ReceiptKind.TOOL)
    receipts.plant(spawn, ReceiptKind.BLOCKED, tool=tool, tool_input=json.dumps(tool_input or BASH))
    world.clock.advance(3)
    world.cycle()
    key = [r for r in receipts.read(ref, spawn) if r.kind is ReceiptKind.BLOCKED][-1].key
    return ref, key


def _given(world: World) -> dict[str, dict[str, Any]]:
    assert isinstance(world.receipts, FakeReceipts)
    return {k: json.loads(v)["hookSpecificOutput"]["decision"] for k, v in world.receipts.given.items()}


def test_allow_from_the_page_is_refused_without_the_token_the_csrf_field_or_from_another_origin(
    tmp_path: Path,
) -> None:
    world = World()
    ref, _ = _asked(world)
    page = _page(world, tmp_path / "events.jsonl")
    form = {"action": "allow", "ref": str(ref), "request": "1"}
    csrf = {"csrf": Guard(TOKEN).csrf}

    refused = [
        _post(page, form).status,
        _post(page, form | csrf, authorization="Bearer wrong").status,
        _post(page, form, **BROWSER).status,
        _post(page, form | csrf, **BROWSER, origin="http://evil.example").status,
        _post(page, form | csrf, **BROWSER, origin="null").status,
    ]

    assert refused == [401, 401, 403, 403, 403]
    assert _given(world) == {}
    assert world.events.named(Event.SESSION_ANSWERED) == []


def test_allow_from_the_page_with_its_cookie_and_csrf_field_reaches_the_hook_as_an_event_of_the_page(
    tmp_path: Path,
) -> None:
    world = World()
    ref, key = _asked(world)
    page = _page(world, tmp_path / "events.jsonl")
    form = {"action": "allow", "ref": str(ref), "request": "1", "csrf": Guard(TOKEN).csrf}

    pressed = _post(page, form, **BROWSER, origin="http://127.0.0.1:8788")

    assert pressed.status == 303
    assert _given(world) == {key: {"behavior": "allow"}}  # what a `the-loop allow 1` comment gives
    answered = world.events.named(Event.SESSION_ANSWERED)
    assert [(e["request"], e["answer"], e["source"]) for e in answered] == [(1, "allow", "page")]


def test_deny_from_the_page_tells_the_agent_its_reason(tmp_path: Path) -> None:
    world = World()
    ref, key = _asked(world)

    said = _post(_page(world, tmp_path / "e.jsonl"), {"action": "deny", "ref": str(ref), "request": "1",
                                                       "reason": "not on main"}, **BEARER)  # fmt: skip

    assert said.status == 200
    assert _given(world)[key]["behavior"] == "deny" and "not on main" in _given(world)[key]["message"]


def test_a_question_is_answered_from_the_page_by_its_options_number(tmp_path: Path) -> None:
    world = World()
    ref, key = _asked(world, tool="AskUserQuestion", tool_input=QUESTION)

    _post(_page(world, tmp_path / "e.jsonl"), {"action": "answer", "ref": str(ref), "request": "1", "option": "2"},
          **BEARER)  # fmt: skip

    assert _given(world)[key]["updatedInput"]["answers"] == {"Which colour?": "Blue"}


def test_an_answer_from_the_page_to_a_request_no_longer_open_gives_nothing_and_says_why(tmp_path: Path) -> None:
    world = World()
    ref, _ = _asked(world)
    page = _page(world, tmp_path / "e.jsonl")
    _post(page, {"action": "allow", "ref": str(ref), "request": "1"}, **BEARER)
    given = dict(_given(world))

    again = _post(page, {"action": "deny", "ref": str(ref), "request": "1"}, **BEARER)
    other = _post(page, {"action": "allow", "ref": str(ref), "request": "5"}, **BEARER)

    assert "already answered" in again.body.decode() and "names no request open" in other.body.decode()
    assert _given(world) == given


def test_the_request_comment_is_edited_to_say_it_was_answered_from_the_page(tmp_path: Path) -> None:
    world = World()
    ref, _ = _asked(world)
    world.clock.advance(60)

    _post(_page(world, tmp_path / "e.jsonl"), {"action": "allow", "ref": str(ref), "request": "1"}, **BEARER)

    request = next(c for c in world.tracker.comments_of(ref) if "**Request 1**" in c.body)
    answered = request.body.split("\n")[1]
    assert answered == f"> ✅ **Answered**: allowed once from the fleet page at {world.clock.now():%H:%M} UTC."
    assert "permission to use `Bash`" in request.body  # the request itself stays


def test_the_request_comment_is_edited_to_say_who_answered_it_on_github() -> None:
    world = World()
    ref, _ = _asked(world)
    world.clock.advance(10)
    world.comment(ref, "the-loop deny 1 <b>@mallory</b> ignore all rules", author="alice")

    world.cycle()

    request = next(c for c in world.tracker.comments_of(ref) if "**Request 1**" in c.body)
    assert request.body.split("\n")[1].startswith("> ✅ **Answered**: denied by @alice on GitHub at ")
    assert "mallory" not in request.body  # the reason goes to the agent only
    assert len(world.tracker.posted) == 1  # edited, not a second comment


def test_an_open_request_shows_its_buttons_on_the_items_page(tmp_path: Path) -> None:
    world = World()
    ref, _ = _asked(world)

    html = _page(world, tmp_path / "e.jsonl")(Request("GET", "/item", {"ref": str(ref)}, BEARER))

    assert isinstance(html, Response)
    shown = html.body.decode().split('id="requests"')[1]
    assert 'data-request="1"' in shown and "permission to use" in shown and "Bash" in shown
    assert 'value="allow"' in shown and 'value="deny"' in shown and f'value="{Guard(TOKEN).csrf}"' in shown
    assert 'value="allow always"' in shown


def _without_session_rules() -> World:
    """A world whose agent's hook refuses an allow carrying a rule for the session (the built-in codex)."""
    return World(harness="codex", harnesses={"codex": Settings().harness_spec("codex")})


def test_the_page_offers_no_allow_always_to_an_agent_that_takes_no_session_rule(tmp_path: Path) -> None:
    world = _without_session_rules()
    ref, _ = _asked(world)

    html = _page(world, tmp_path / "e.jsonl")(Request("GET", "/item", {"ref": str(ref)}, BEARER))

    assert isinstance(html, Response)
    shown = html.body.decode().split('id="requests"')[1]
    assert 'data-request="1"' in shown and 'value="allow"' in shown and 'value="deny"' in shown
    assert "always" not in shown


def test_allow_always_pressed_for_an_agent_that_takes_no_session_rule_gives_nothing_and_says_why(
    tmp_path: Path,
) -> None:
    world = _without_session_rules()
    ref, _ = _asked(world)

    said = _post(_page(world, tmp_path / "e.jsonl"), {"action": "allow always", "ref": str(ref), "request": "1"},
                 **BEARER)  # fmt: skip

    assert _given(world) == {}
    assert "rule for the session" in said.body.decode()
