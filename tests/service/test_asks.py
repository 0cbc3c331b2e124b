"""What the agent asks goes to the item as one comment, and an authorized
answer comment goes back to its hook, once — over fakes (real Claude: tests/claude/test_loop_asks.py)."""

from __future__ import annotations

import json
import re
from typing import Any

from app.config.settings import Settings
from domain.asks import WaitingOn
from domain.events import Event
from domain.model import Reaction
from domain.receipts import ReceiptKind
from domain.refs import WorkItemRef
from tests.fakes.receipts import FakeReceipts
from tests.service.world import World

BASH = {"command": "rm -rf build", "description": "Clean the build"}
QUESTION = "Which colour should the button be?"
ASK = {
    "questions": [
        {
            "question": QUESTION,
            "header": "Colour",
            "options": [{"label": "Red", "description": ""}, {"label": "Blue", "description": ""}],
            "multiSelect": False,
        }
    ]
}


def _receipts(world: World) -> FakeReceipts:
    assert isinstance(world.receipts, FakeReceipts)
    return world.receipts


def _asks(world: World, tool: str = "Bash", tool_input: dict[str, Any] | None = None) -> tuple[WorkItemRef, str]:
    """A watched item whose agent asks through its PermissionRequest hook; the key of the request."""
    ref = world.watched()
    spawn = world.record(ref).spawn_id
    receipts = _receipts(world)
    receipts.plant(spawn, ReceiptKind.TOOL)
    receipts.plant(spawn, ReceiptKind.BLOCKED, tool=tool, tool_input=json.dumps(tool_input or BASH))
    world.clock.advance(3)
    key = [r for r in receipts.read(ref, spawn) if r.kind is ReceiptKind.BLOCKED][-1].key
    return ref, key


def _decision(world: World, key: str) -> dict[str, Any]:
    output = json.loads(_receipts(world).given[key])
    assert output["hookSpecificOutput"]["hookEventName"] == "PermissionRequest"
    return dict(output["hookSpecificOutput"]["decision"])


def test_a_permission_request_is_posted_once_with_the_tool_and_its_input_fenced() -> None:
    world = World()
    ref, _ = _asks(world, tool_input={"command": "echo ```\n# a heading\n@alice", "description": "x"})

    world.cycle()
    world.cycle()

    asked = [body for _, body in world.tracker.posted if "permission to use `Bash`" in body]
    assert len(asked) == 1 and len(world.tracker.posted) == 1  # and no second "waiting" notice
    body = asked[0]
    assert "````json\n" in body  # a fence longer than the input's own backticks
    assert "the-loop allow 1" in body and "the-loop allow always 1" in body and "the-loop deny 1" in body
    assert len(world.events.named(Event.SESSION_ASKED)) == 1
    assert [r.number for r in world.record(ref).requests] == [1]


def test_an_authorized_allow_hands_the_hook_allow_once_and_is_acknowledged() -> None:
    world = World()
    ref, key = _asks(world)
    world.cycle()
    answer = world.comment(ref, "the-loop allow")

    world.cycle()

    assert _decision(world, key) == {"behavior": "allow"}
    assert (answer.id, Reaction.CONTROL) in world.tracker.reactions
    assert world.events.named(Event.SESSION_ANSWERED)[0]["answer"] == "allow"


def test_allow_always_adds_a_session_rule_for_that_tool() -> None:
    world = World()
    ref, key = _asks(world)
    world.cycle()
    world.comment(ref, "/the-loop allow always")

    world.cycle()

    rule = {"type": "addRules", "rules": [{"toolName": "Bash"}], "behavior": "allow", "destination": "session"}
    assert _decision(world, key) == {"behavior": "allow", "updatedPermissions": [rule]}


def _without_session_rules() -> World:
    """A world whose agent's hook refuses an allow carrying a rule for the session (the built-in codex)."""
    return World(harness="codex", harnesses={"codex": Settings().harness_spec("codex")})


def test_a_request_of_an_agent_that_takes_no_session_rule_offers_allow_and_deny_but_not_allow_always() -> None:
    world = _without_session_rules()
    _asks(world)

    world.cycle()

    (body,) = [body for _, body in world.tracker.posted if "permission to use `Bash`" in body]
    assert "the-loop allow 1" in body and "the-loop deny 1" in body
    assert "always" not in body


def test_allow_always_to_an_agent_that_takes_no_session_rule_is_refused_saying_what_to_write_instead() -> None:
    world = _without_session_rules()
    ref, key = _asks(world)
    world.cycle()
    answer = world.comment(ref, "the-loop allow always 1")

    world.cycle()

    assert key not in _receipts(world).given
    assert (answer.id, Reaction.FAILED) in world.tracker.reactions
    assert world.events.named(Event.SESSION_ANSWER_UNUSED)[0]["why"] == "does-not-fit"
    reply = world.tracker.posted[-1][1]
    assert "not used" in reply and "rule for the session" in reply
    assert "`the-loop allow 1`" in reply and "`the-loop deny 1 [reason]`" in reply
    assert "Open now: request 1 (permission to use `Bash`)" in reply
    assert [r.closed for r in world.record(ref).requests] == [False]


def test_a_plain_allow_after_a_refused_allow_always_still_answers_the_request() -> None:
    world = _without_session_rules()
    ref, key = _asks(world)
    world.cycle()
    world.comment(ref, "the-loop allow always 1")
    world.cycle()
    world.clock.advance(5)
    world.comment(ref, "the-loop allow 1")

    world.cycle()

    assert _decision(world, key) == {"behavior": "allow"}


def test_deny_hands_the_agent_the_reason_and_never_echoes_it_on_the_item() -> None:
    world = World()
    ref, key = _asks(world)
    world.cycle()
    world.comment(ref, "the-loop deny not on main @bob\nuse a branch")

    world.cycle()

    decision = _decision(world, key)
    assert decision["behavior"] == "deny"
    assert "not on main @bob\nuse a branch" in decision["message"]
    assert not any("@bob" in body for _, body in world.tracker.posted)


def test_the_first_answer_wins_and_a_second_is_told_it_was_answered_already() -> None:
    world = World()
    ref, key = _asks(world)
    _receipts(world).hook_takes = True
    world.cycle()
    world.comment(ref, "the-loop allow")
    second = world.comment(ref, "the-loop deny")

    world.cycle()

    assert _decision(world, key) == {"behavior": "allow"}
    assert (second.id, Reaction.FAILED) in world.tracker.reactions
    assert "already answered" in world.tracker.posted[-1][1]
    assert world.events.named(Event.SESSION_ANSWER_UNUSED)[0]["why"] == "already-answered"


def test_an_answer_after_the_hooks_wait_ended_is_too_late_and_not_given() -> None:
    world = World()
    ref, key = _asks(world)
    world.cycle()
    _receipts(world).expired.add(key)
    late = world.comment(ref, "the-loop allow")

    world.cycle()

    assert key not in _receipts(world).given
    assert (late.id, Reaction.FAILED) in world.tracker.reactions
    assert world.events.named(Event.SESSION_ANSWER_UNUSED)[0]["why"] == "too-late"


def test_an_answer_with_no_request_open_says_so() -> None:
    world = World()
    ref = world.watched()
    answer = world.comment(ref, "the-loop allow")

    world.cycle()

    assert (answer.id, Reaction.FAILED) in world.tracker.reactions
    assert "waits on no request" in world.tracker.posted[-1][1]


def test_an_answer_by_someone_not_authorized_answers_nothing() -> None:
    world = World()
    ref, key = _asks(world)
    world.cycle()
    world.comment(ref, "the-loop allow", author="mallory")

    world.cycle()

    assert key not in _receipts(world).given


def test_a_request_answered_in_the_pane_is_said_once_on_the_item() -> None:
    world = World()
    ref, _ = _asks(world)
    world.cycle()
    # someone attached allowed it: its PostToolUse names the tool and input its request named
    _receipts(world).plant(world.record(ref).spawn_id, ReceiptKind.WORKING, tool="Bash", tool_input=json.dumps(BASH))

    world.cycle()
    world.cycle()

    said = [body for _, body in world.tracker.posted if "answered in its session" in body]
    assert len(said) == 1 and "cannot be shown" not in said[0]
    assert len(world.events.named(Event.SESSION_ANSWERED_IN_PANE)) == 1


def test_a_question_is_posted_with_its_options_and_answered_by_number() -> None:
    world = World()
    ref, key = _asks(world, tool="AskUserQuestion", tool_input=ASK)
    world.cycle()
    body = world.tracker.posted[-1][1]
    assert "asks a question" in body and "1. Red" in body and "2. Blue" in body
    world.comment(ref, "the-loop answer 2")

    world.cycle()

    decision = _decision(world, key)
    assert decision["behavior"] == "allow"
    assert decision["updatedInput"]["answers"] == {QUESTION: "Blue"}
    assert decision["updatedInput"]["questions"] == ASK["questions"]


def test_a_question_answered_by_the_options_text_gives_the_options_own_label() -> None:
    world = World()
    ref, key = _asks(world, tool="AskUserQuestion", tool_input=ASK)
    world.cycle()
    world.comment(ref, "the-loop answer red")

    world.cycle()

    assert _decision(world, key)["updatedInput"]["answers"] == {QUESTION: "Red"}


def test_an_answer_that_names_no_option_is_refused_and_nothing_is_given() -> None:
    world = World()
    ref, key = _asks(world, tool="AskUserQuestion", tool_input=ASK)
    world.cycle()
    world.comment(ref, "the-loop answer 7")

    world.cycle()

    assert key not in _receipts(world).given
    assert world.events.named(Event.SESSION_ANSWER_UNUSED)[0]["why"] == "does-not-fit"


def test_the_status_reply_says_what_the_agent_waits_on_and_since_when() -> None:
    world = World()
    ref, _ = _asks(world)
    world.cycle()
    world.clock.advance(125)
    world.comment(ref, "the-loop status")

    world.cycle()

    reply = world.tracker.posted[-1][1]
    assert "blocked on permission to use `Bash`" in reply
    assert re.search(r"blocked on permission to use `Bash` for [2-9]m\d\ds", reply)


def test_sessions_list_shows_a_question_waiting_for_an_answer_and_since_when() -> None:
    world = World()
    _asks(world, tool="AskUserQuestion", tool_input=ASK)
    world.cycle()
    world.clock.advance(60)

    (view,) = world.admin().listing()

    assert view.waiting is not None and view.waiting.on is WaitingOn.QUESTION
    shown = view.as_json()["waiting"]
    assert shown["on"] == "question" and shown["seconds"] >= 60


def test_the_blocked_event_says_what_it_waits_on() -> None:
    world = World()
    ref = world.watched()
    _receipts(world).plant(world.record(ref).spawn_id, ReceiptKind.BLOCKED, detail="elicitation")  # no hook asked
    world.comment(ref)

    world.cycle()

    assert world.events.named(Event.SESSION_BLOCKED)[0]["waiting_on"] == "dialog"


def test_a_request_left_open_by_a_respawn_is_not_said_to_be_answered_in_the_pane() -> None:
    world = World()
    ref, _ = _asks(world)
    world.cycle()
    world.vanish(ref)  # the session is gone; the next comment spawns a fresh one
    world.comment(ref, "go on")

    world.cycle()
    world.cycle()

    assert world.events.named(Event.SESSION_ANSWERED_IN_PANE) == []
    assert not any("answered in its session" in body for _, body in world.tracker.posted)


def test_an_answer_whose_option_is_a_digit_of_another_script_is_told_it_fits_no_option_and_holds_nothing() -> None:
    world = World()
    ref, key = _asks(world, tool="AskUserQuestion", tool_input=ASK)
    world.cycle()
    superscript = world.comment(ref, "the-loop answer 1 ²")  # a digit to str.isdigit, not to int()
    arabic = world.comment(ref, "the-loop answer 1 ١")  # a decimal digit, but not an ASCII one
    later = world.comment(ref, "the-loop answer 1 2")

    world.cycle()

    assert (superscript.id, Reaction.FAILED) in world.tracker.reactions
    assert (arabic.id, Reaction.FAILED) in world.tracker.reactions
    assert superscript.id in world.ledger(ref).resolved and arabic.id in world.ledger(ref).resolved
    assert _decision(world, key)["updatedInput"]["answers"] == {QUESTION: "Blue"}
    assert (later.id, Reaction.CONTROL) in world.tracker.reactions
