"""The Anthropic stand-in on its own: the script's order, streamed shapes, errors, holding, the log."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.anthropic_standin.script import Busy, Fail, Say, Usage, UseTool
from tests.anthropic_standin.server import AnthropicStandIn, Kind

TURN = {"model": "m", "max_tokens": 10, "tools": [{"name": "Bash"}], "stream": True, "messages": []}


@pytest.fixture
def standin() -> Iterator[AnthropicStandIn]:
    server = AnthropicStandIn()
    try:
        yield server
    finally:
        server.close()


def post(standin: AnthropicStandIn, path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(
        standin.base_url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, dict(reply.headers), reply.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def events(body: bytes) -> list[dict[str, Any]]:
    """The data of each server-sent event, checking each `event:` line names its data's type."""
    found = []
    for chunk in body.decode().strip().split("\n\n"):
        name, data = chunk.split("\n")
        assert name.startswith("event: ") and data.startswith("data: ")
        doc = json.loads(data.removeprefix("data: "))
        assert doc["type"] == name.removeprefix("event: ")
        found.append(doc)
    return found


def test_turns_take_the_scripted_behaviours_in_order_then_the_fallback(standin: AnthropicStandIn) -> None:
    standin.script(Say("first"), UseTool(input={"command": "ls"}))
    texts = [events(post(standin, "/v1/messages?beta=true", TURN)[2]) for _ in range(3)]
    assert texts[0][3]["delta"] == {"type": "text_delta", "text": "first"}
    assert texts[0][-2]["delta"]["stop_reason"] == "end_turn"
    assert texts[1][2]["content_block"]["type"] == "tool_use"
    assert json.loads(texts[1][3]["delta"]["partial_json"]) == {"command": "ls"}
    assert texts[1][-2]["delta"]["stop_reason"] == "tool_use"
    assert texts[2][3]["delta"]["text"] == "OK"


def test_a_stream_has_the_messages_api_event_order(standin: AnthropicStandIn) -> None:
    kinds = [e["type"] for e in events(post(standin, "/v1/messages", TURN)[2])]
    assert kinds == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]


def test_a_scripted_usage_is_served_as_the_api_streams_it(standin: AnthropicStandIn) -> None:
    standin.script(Say("costly", usage=Usage(input=11, output=22, cache_write=33, cache_read=44)))
    streamed = events(post(standin, "/v1/messages", TURN)[2])
    assert streamed[0]["message"]["usage"] == {
        "input_tokens": 11,
        "cache_creation_input_tokens": 33,
        "cache_read_input_tokens": 44,
        "output_tokens": 1,
    }
    assert streamed[-2]["usage"] == {"output_tokens": 22}


def test_a_request_without_tools_is_answered_but_takes_nothing_from_the_script(standin: AnthropicStandIn) -> None:
    standin.script(Say("scripted"))
    side = json.loads(post(standin, "/v1/messages", TURN | {"tools": [], "stream": False})[2])
    assert side["content"] == [{"type": "text", "text": "OK"}]
    assert events(post(standin, "/v1/messages", TURN)[2])[3]["delta"]["text"] == "scripted"
    assert [r.kind for r in standin.requests()] == [Kind.SIDE, Kind.TURN]


def test_a_failure_is_an_api_error_that_says_not_to_retry(standin: AnthropicStandIn) -> None:
    standin.script(Fail(529, "overloaded_error", "busy"))
    status, headers, body = post(standin, "/v1/messages", TURN)
    assert status == 529
    assert headers["x-should-retry"] == "false"
    assert json.loads(body) == {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}


def test_busy_holds_the_answer_until_released(standin: AnthropicStandIn) -> None:
    standin.script(Busy(60, then=Say("late")))
    answers: list[bytes] = []
    thread = threading.Thread(target=lambda: answers.append(post(standin, "/v1/messages", TURN)[2]))
    thread.start()
    time.sleep(0.5)
    assert answers == []
    standin.release()
    thread.join(timeout=10)
    assert events(answers[0])[3]["delta"]["text"] == "late"


def test_unknown_routes_are_answered_404_and_logged_as_unknown(standin: AnthropicStandIn) -> None:
    status, _, _ = post(standin, "/v1/organizations/usage", {})
    assert status == 404
    assert [(r.kind, r.path) for r in standin.requests()] == [(Kind.UNKNOWN, "/v1/organizations/usage")]


def test_count_tokens_is_answered_minimally(standin: AnthropicStandIn) -> None:
    assert json.loads(post(standin, "/v1/messages/count_tokens", TURN)[2]) == {"input_tokens": 1}


def test_each_reply_is_kept_with_the_usage_it_said_and_a_failure_is_not(standin: AnthropicStandIn) -> None:
    scripted = Usage(input=11, output=22, cache_write=33, cache_read=44)
    standin.script(Busy(0, then=UseTool(usage=scripted)), Fail(), Say("bare"))
    for body in (TURN, TURN, TURN | {"tools": []}, TURN):
        post(standin, "/v1/messages", body)
    post(standin, "/v1/messages/count_tokens", TURN)

    assert [(r.request.kind, r.usage) for r in standin.replies()] == [
        (Kind.TURN, scripted),
        (Kind.SIDE, Usage()),  # the API's minimum: what a reply without a scripted usage says
        (Kind.TURN, Usage()),
    ]
