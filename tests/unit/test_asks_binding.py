"""The pure part of binding an answer to a request: the request's number read from the comment,
the requests still open from the receipts, and which one (if any) an answer answers."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from domain.asks import (
    Answer,
    AnswerVerb,
    Ask,
    OpenRequest,
    Unbound,
    answer_of,
    answered_reply,
    ask_comment,
    bind,
    open_asks,
)
from domain.control import control_of
from domain.model import PostedRequest
from domain.receipts import HarnessState, Receipt, ReceiptKind, harness_state, open_requests
from domain.refs import WorkItemRef

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
LIST = json.dumps({"command": "ls -la"})
READ = json.dumps({"file_path": "/etc/hosts"})
WAIT = timedelta(minutes=10)  # how long a request's hook waits for an answer from the item


def _answer(body: str) -> Answer | None:
    control = control_of(body)
    assert control is not None
    return answer_of(control)


def _receipt(n: int, kind: ReceiptKind, tool: str = "", tool_input: str = "") -> Receipt:
    return Receipt(kind, f"{n:04d}", at=T0 + timedelta(milliseconds=n), tool=tool, tool_input=tool_input)


def _open(number: int | None, posted: int | None, tool: str = "Bash") -> OpenRequest:
    at = T0 + timedelta(seconds=posted) if posted is not None else None
    return OpenRequest(Ask(f"k{number}", tool, {}), number, at)


def test_a_requests_number_comes_right_after_the_verb() -> None:
    assert _answer("the-loop allow 3") == Answer(AnswerVerb.ALLOW, number=3)
    assert _answer("the-loop allow always 3") == Answer(AnswerVerb.ALLOW_ALWAYS, number=3)
    assert _answer("the-loop allow 3 always") == Answer(AnswerVerb.ALLOW_ALWAYS, number=3)
    assert _answer("the-loop allow") == Answer(AnswerVerb.ALLOW)
    assert _answer("the-loop deny 3 not on main\nuse a branch") == Answer(
        AnswerVerb.DENY, "not on main\nuse a branch", 3
    )
    assert _answer("the-loop deny not now") == Answer(AnswerVerb.DENY, "not now")
    assert _answer("the-loop answer 3 2") == Answer(AnswerVerb.ANSWER, "2", 3)
    assert _answer("the-loop answer 3 Blue") == Answer(AnswerVerb.ANSWER, "Blue", 3)
    assert _answer("the-loop answer 2") == Answer(AnswerVerb.ANSWER, "2")  # one word: the option


def test_allow_with_other_words_is_no_answer() -> None:
    assert _answer("the-loop allow everything") is None
    assert _answer("the-loop allow 3 4") is None
    assert _answer("the-loop allow always always") is None
    assert _answer("the-loop allow 0") is None


def test_a_number_binds_to_that_open_request_when_written_after_it_was_posted() -> None:
    opened = [_open(1, 0), _open(2, 5)]

    assert (
        bind(Answer(AnswerVerb.ALLOW, number=2), opened, (), window=WAIT, written_at=T0 + timedelta(seconds=9))
        == opened[1]
    )
    assert (
        bind(Answer(AnswerVerb.ALLOW, number=2), opened, (), window=WAIT, written_at=T0 + timedelta(seconds=4))
        is Unbound.WRITTEN_BEFORE
    )
    assert (
        bind(Answer(AnswerVerb.ALLOW, number=7), opened, (), window=WAIT, written_at=T0 + timedelta(seconds=9))
        is Unbound.NO_SUCH_REQUEST
    )


def test_a_bare_answer_binds_only_to_the_one_open_request_posted_before_it() -> None:
    later = T0 + timedelta(seconds=9)
    bare = Answer(AnswerVerb.ALLOW)

    assert bind(bare, [_open(1, 0)], (), window=WAIT, written_at=later) == _open(1, 0)
    assert bind(bare, [_open(1, 0), _open(2, 5)], (), window=WAIT, written_at=later) is Unbound.SEVERAL_OPEN
    assert bind(bare, [_open(1, 0), _open(None, None)], (), window=WAIT, written_at=later) is Unbound.SEVERAL_OPEN
    assert bind(bare, [_open(2, 10)], (), window=WAIT, written_at=later) is Unbound.WRITTEN_BEFORE
    assert bind(bare, [_open(None, None)], (), window=WAIT, written_at=later) is Unbound.WRITTEN_BEFORE


def test_an_answer_with_nothing_open_is_told_whether_it_came_after_a_request() -> None:
    answered = (PostedRequest("k1", 1, T0, closed=True),)
    later = T0 + timedelta(seconds=9)

    assert bind(Answer(AnswerVerb.ALLOW), [], answered, window=WAIT, written_at=later) is Unbound.ALREADY_ANSWERED
    assert (
        bind(Answer(AnswerVerb.ALLOW, number=1), [], answered, window=WAIT, written_at=later)
        is Unbound.ALREADY_ANSWERED
    )
    assert bind(Answer(AnswerVerb.ALLOW), [], (), window=WAIT, written_at=later) is Unbound.NO_REQUEST


def test_the_reply_names_the_open_requests_by_number_and_tool() -> None:
    reply = answered_reply(why="more than one is open", opened=[_open(1, 0), _open(2, 5, tool="Read")])

    assert "request 1 (permission to use `Bash`), request 2 (permission to use `Read`)" in reply
    assert "Nothing was approved" in reply


def test_two_requests_of_one_message_are_both_open_until_each_tool_runs() -> None:
    asked = [
        _receipt(1, ReceiptKind.PROMPT),
        _receipt(2, ReceiptKind.TOOL),
        _receipt(3, ReceiptKind.TOOL),
        _receipt(4, ReceiptKind.BLOCKED, "Bash", LIST),
        _receipt(5, ReceiptKind.BLOCKED, "Read", READ),
    ]
    first_ran = [*asked, _receipt(6, ReceiptKind.WORKING, "Bash", LIST)]
    both_ran = [*first_ran, _receipt(7, ReceiptKind.WORKING, "Read", READ)]

    assert [r.key for r in open_requests(asked)] == ["0004", "0005"]
    assert [r.key for r in open_requests(first_ran)] == ["0005"]
    assert harness_state(first_ran) is HarnessState.BLOCKED
    assert open_requests(both_ran) == [] and harness_state(both_ran) is HarnessState.BUSY


def test_a_request_whose_hook_took_a_denial_is_not_open_though_its_tool_never_runs() -> None:
    receipts = [
        _receipt(1, ReceiptKind.PROMPT),
        _receipt(4, ReceiptKind.BLOCKED, "Bash", LIST),
        _receipt(5, ReceiptKind.BLOCKED, "Read", READ),
        _receipt(6, ReceiptKind.WORKING, "Read", READ),
    ]

    assert harness_state(receipts) is HarnessState.BLOCKED
    assert harness_state(receipts, taken={"0004"}) is HarnessState.BUSY


def test_a_tool_that_asked_nothing_answers_no_request_and_a_turns_end_closes_them_all() -> None:
    receipts = [
        _receipt(1, ReceiptKind.PROMPT),
        _receipt(4, ReceiptKind.BLOCKED, "Bash", LIST),
        _receipt(5, ReceiptKind.WORKING, "Glob", json.dumps({"pattern": "*"})),
    ]

    assert [r.key for r in open_requests(receipts)] == ["0004"]
    assert open_requests([*receipts, _receipt(6, ReceiptKind.TURN_ENDED)]) == []


def test_an_answer_written_a_second_after_the_post_counts_as_written_before_it_a_host_clock_may_lag() -> None:
    posted = _open(1, 0)
    a_second_after = T0 + timedelta(seconds=1)

    assert (
        bind(Answer(AnswerVerb.ALLOW), [posted], (), window=WAIT, written_at=a_second_after) is Unbound.WRITTEN_BEFORE
    )
    assert (
        bind(Answer(AnswerVerb.ALLOW, number=1), [posted], (), window=WAIT, written_at=a_second_after)
        is Unbound.WRITTEN_BEFORE
    )
    assert bind(Answer(AnswerVerb.ALLOW), [posted], (), window=WAIT, written_at=T0 + timedelta(seconds=3)) == posted


def test_a_tool_run_with_other_input_leaves_the_request_for_that_tool_open() -> None:
    # one message reads /etc/hosts (outside the folder: it asks) and ./README.md (allowed: it just runs)
    receipts = [
        _receipt(1, ReceiptKind.PROMPT),
        _receipt(2, ReceiptKind.TOOL),
        _receipt(3, ReceiptKind.TOOL),
        _receipt(4, ReceiptKind.BLOCKED, "Read", READ),
        _receipt(5, ReceiptKind.WORKING, "Read", json.dumps({"file_path": "./README.md"})),
    ]

    assert [r.key for r in open_requests(receipts)] == ["0004"]
    assert harness_state(receipts) is HarnessState.BLOCKED


def test_a_question_run_with_the_answers_given_closes_its_request_and_no_other_change_does() -> None:
    asked = {"questions": [{"question": "Which colour?", "options": [{"label": "Blue"}, {"label": "Red"}]}]}
    answered = {**asked, "answers": {"Which colour?": "Blue"}}
    other = {"questions": [{"question": "Which size?", "options": [{"label": "S"}]}], "answers": {}}
    receipts = [_receipt(1, ReceiptKind.PROMPT), _receipt(4, ReceiptKind.BLOCKED, "AskUserQuestion", json.dumps(asked))]

    ran = [*receipts, _receipt(5, ReceiptKind.WORKING, "AskUserQuestion", json.dumps(answered))]
    assert open_requests(ran) == []
    another = [*receipts, _receipt(5, ReceiptKind.WORKING, "AskUserQuestion", json.dumps(other))]
    assert [r.key for r in open_requests(another)] == ["0004"]


def test_a_command_run_without_the_why_its_request_gave_closes_the_request_and_another_command_does_not() -> None:
    # Codex's request names why it asks (`description`); its run names the command alone
    asked = {"command": "touch x", "description": "to make x"}
    receipts = [_receipt(1, ReceiptKind.PROMPT), _receipt(4, ReceiptKind.BLOCKED, "Bash", json.dumps(asked))]

    ran = [*receipts, _receipt(5, ReceiptKind.WORKING, "Bash", json.dumps({"command": "touch x"}))]
    assert open_requests(ran) == []
    other = [*receipts, _receipt(5, ReceiptKind.WORKING, "Bash", json.dumps({"command": "touch y"}))]
    assert [r.key for r in open_requests(other)] == ["0004"]
    why_changed = {"command": "touch x", "description": "another why"}
    changed = [*receipts, _receipt(5, ReceiptKind.WORKING, "Bash", json.dumps(why_changed))]
    assert [r.key for r in open_requests(changed)] == ["0004"]


def test_a_run_naming_no_tool_closes_no_request() -> None:
    receipts = [
        _receipt(1, ReceiptKind.PROMPT),
        _receipt(4, ReceiptKind.BLOCKED, "Bash", LIST),
        _receipt(5, ReceiptKind.WORKING),
    ]

    assert [r.key for r in open_requests(receipts)] == ["0004"]


def test_a_bare_answer_binds_to_nothing_while_another_request_was_posted_within_the_wait_before_it() -> None:
    # request 1 posted at t0 and answered in the pane; request 2 posted at t0+31; Alice, answering
    # request 1 from its notification, writes a bare allow at t0+90
    answered = PostedRequest("k1", 1, T0, closed=True)
    second = _open(2, 31)
    posted = (answered, PostedRequest("k2", 2, T0 + timedelta(seconds=31)))
    bare = Answer(AnswerVerb.ALLOW)

    assert bind(bare, [second], posted, window=WAIT, written_at=T0 + timedelta(seconds=90)) is Unbound.ANOTHER_RECENT
    assert (
        bind(Answer(AnswerVerb.ALLOW, number=2), [second], posted, window=WAIT, written_at=T0 + timedelta(seconds=90))
        == second
    )
    # once the other request is older than a hook waits, a bare answer to the one open counts again
    assert bind(bare, [second], posted, window=WAIT, written_at=T0 + WAIT + timedelta(seconds=3)) == second


DEEP = '{"a": ' * 5000 + "1" + "}" * 5000  # past what the JSON parser takes (RecursionError)


def test_a_request_whose_input_is_nested_too_deep_to_read_is_read_as_unreadable_never_raising() -> None:
    receipts = [
        _receipt(1, ReceiptKind.PROMPT),
        _receipt(4, ReceiptKind.BLOCKED, "mcp__x__y", DEEP),
        _receipt(5, ReceiptKind.WORKING, "mcp__x__y", LIST),
    ]

    (ask,) = open_asks(receipts)
    assert "a" not in ask.tool_input
    assert "nested too deep" in ask_comment(WorkItemRef.parse("github:acme/widgets#7"), ask, number=1, wait_seconds=60)
    assert open_asks([*receipts, _receipt(6, ReceiptKind.WORKING, "mcp__x__y", DEEP)]) == []
