"""tests/openai_standin: a scripted Responses API turn over SSE, logged; busy and failing answers."""

from __future__ import annotations

import contextlib
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from tests.openai_standin.server import Busy, Call, Fail, OpenAIStandIn, Say, Usage


@pytest.fixture
def standin() -> Iterator[OpenAIStandIn]:
    server = OpenAIStandIn()
    try:
        yield server
    finally:
        server.close()


def turn(standin: OpenAIStandIn, text: str) -> tuple[int, str]:
    body = {
        "model": "m",
        "stream": True,
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}],
    }
    request = urllib.request.Request(f"{standin.base_url}/responses", json.dumps(body).encode(), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def events(sse: str) -> list[dict[str, object]]:
    return [json.loads(line[len("data: ") :]) for line in sse.splitlines() if line.startswith("data: ")]


def test_a_turn_streams_the_scripted_text_and_completes_and_is_logged_with_its_user_text(
    standin: OpenAIStandIn,
) -> None:
    standin.script(Say("scripted"))
    status, sse = turn(standin, "hello")
    assert status == 200
    kinds = [e["type"] for e in events(sse)]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    done = next(e for e in events(sse) if e["type"] == "response.output_item.done")
    assert done["item"]["content"][0]["text"] == "scripted"  # type: ignore[index]
    assert [t.user_texts() for t in standin.turns()] == [["hello"]]
    assert "OK" in turn(standin, "again")[1]  # the fallback once the script is spent


def test_a_busy_turn_is_held_until_released_and_a_failure_is_an_http_error(standin: OpenAIStandIn) -> None:
    standin.script(Busy(60, then=Say("late")), Fail(400, "nope"))
    answers: list[tuple[int, str]] = []
    held = threading.Thread(target=lambda: answers.append(turn(standin, "wait")))
    held.start()
    held.join(0.5)
    assert held.is_alive() and answers == []
    standin.release()
    held.join(10)
    assert answers and "late" in answers[0][1]
    status, body = turn(standin, "fail")
    assert status == 400 and "nope" in body


def test_a_scripted_usage_completes_the_turn_it_answers(standin: OpenAIStandIn) -> None:
    standin.script(
        Say("costly", usage=Usage(input=500, output=40, cached=300, reasoning=7)), Call("shell", usage=Usage(9))
    )
    usages = [events(turn(standin, text)[1])[-1]["response"]["usage"] for text in ("one", "two")]  # type: ignore[index]
    assert usages[0] == {
        "input_tokens": 500,
        "input_tokens_details": {"cached_tokens": 300},
        "output_tokens": 40,
        "output_tokens_details": {"reasoning_tokens": 7},
        "total_tokens": 540,
    }
    assert usages[1]["input_tokens"] == 9


def test_a_side_reply_answers_the_requests_without_tools_and_leaves_the_script_to_the_rest() -> None:
    standin = OpenAIStandIn(side=Say("a title", usage=Usage(3, 4)))
    try:
        standin.script(Say("scripted"))
        answers = []
        for tools in ([{"type": "function", "name": "exec_command"}], []):
            body = {"model": "m", "stream": True, "input": [], "tools": tools}
            request = urllib.request.Request(f"{standin.base_url}/responses", json.dumps(body).encode(), method="POST")
            with urllib.request.urlopen(request, timeout=10) as answer:
                answers.append(answer.read().decode())
        assert "scripted" in answers[0] and "a title" in answers[1]
        assert [r.is_side for r in standin.turns()] == [False, True]
        assert standin.loop_turns() == standin.turns()[:1]
    finally:
        standin.close()


def test_each_reply_is_kept_with_the_usage_it_said_and_a_failure_is_not() -> None:
    title = Usage(3, 4)
    standin = OpenAIStandIn(side=Say("a title", usage=title))
    try:
        scripted = Usage(input=500, output=40, cached=300, reasoning=7)
        standin.script(Call("shell", usage=scripted), Fail(400, "nope"), Busy(0, then=Say("bare")))
        for tools in (True, False, True, True, False):
            body = {"model": "m", "stream": True, "input": [], "tools": [{"type": "function", "name": "shell"}] * tools}
            request = urllib.request.Request(f"{standin.base_url}/responses", json.dumps(body).encode(), method="POST")
            with contextlib.suppress(urllib.error.HTTPError):
                urllib.request.urlopen(request, timeout=10).close()

        assert [(r.request.is_side, r.usage) for r in standin.replies()] == [
            (False, scripted),
            (True, title),
            (False, Usage()),  # the API's minimum: what a reply without a scripted usage says
            (True, title),
        ]
    finally:
        standin.close()
