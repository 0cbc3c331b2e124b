"""tests/gemini_standin: a scripted usage served as the Gemini API counts it, a side question's apart."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.gemini_standin.server import SIDE_USAGE, Call, GeminiStandIn, Say, Usage


@pytest.fixture
def standin() -> Iterator[GeminiStandIn]:
    server = GeminiStandIn()
    try:
        yield server
    finally:
        server.close()


def ask(standin: GeminiStandIn, method: str) -> dict[str, Any]:
    """One request to the model as Gemini CLI makes it; the (last) answer it got."""
    body = {"contents": [{"role": "user", "parts": [{"text": "hello"}]}]}
    url = f"{standin.base_url}/v1beta/models/gemini-standin-pro:{method}"
    request = urllib.request.Request(url, json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=10) as answer:
        text = answer.read().decode()
    return json.loads(text.strip().removeprefix("data: ").strip())  # type: ignore[no-any-return]


def test_a_scripted_usage_is_served_in_usage_metadata_as_the_api_counts_it(standin: GeminiStandIn) -> None:
    standin.script(
        Call("run_shell_command", {"command": "true"}, usage=Usage(9, 2)), Say("costly", usage=Usage(500, 40, 300, 7))
    )
    usages = [ask(standin, "streamGenerateContent?alt=sse")["usageMetadata"] for _ in range(2)]
    assert usages == [
        {"promptTokenCount": 9, "candidatesTokenCount": 2, "totalTokenCount": 11},
        {
            "promptTokenCount": 500,
            "candidatesTokenCount": 33,
            "cachedContentTokenCount": 300,
            "thoughtsTokenCount": 7,
            "totalTokenCount": 540,
        },
    ]
    assert [(r.model, r.is_turn, r.is_side_question) for r in standin.log] == [("gemini-standin-pro", True, False)] * 2


def test_a_side_question_is_answered_off_the_script_with_its_own_usage(standin: GeminiStandIn) -> None:
    standin.script(Say("scripted"))
    side = ask(standin, "generateContent")
    assert side["usageMetadata"]["promptTokenCount"] == SIDE_USAGE.input
    assert [(r.is_turn, r.is_side_question) for r in standin.log] == [(False, True)]
    assert "scripted" in json.dumps(ask(standin, "streamGenerateContent?alt=sse"))
