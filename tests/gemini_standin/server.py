"""The Gemini API stand-in on 127.0.0.1: the OpenAI stand-in's server and script (`Say`, `Busy`,
`Fail`), speaking the Gemini API as Gemini CLI calls it with `GEMINI_API_KEY` and
`GOOGLE_GEMINI_BASE_URL`.

A turn is `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`, answered as one SSE event
holding the whole reply with `finishReason: STOP`. Gemini CLI also calls `:generateContent` for
its own side questions (its model router's choice before each prompt, whether the model or the user
speaks next, a session's summary): those get
`{"next_speaker": "user"}` as text, which ends a turn there, and are not turns.

A scripted `Usage` is served as the API counts it in `usageMetadata`: `promptTokenCount` counting
the cached tokens too (`cachedContentTokenCount`), `candidatesTokenCount` without the reasoning
(`thoughtsTokenCount`), `totalTokenCount` all of them. A side question is answered with `SIDE_USAGE`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from tests.openai_standin.server import Busy, Fail, OpenAIStandIn, Request, Say, Usage

__all__ = ["SIDE_USAGE", "Busy", "Call", "Fail", "GeminiRequest", "GeminiStandIn", "Say", "Usage"]

_SIDE_ANSWER = {"next_speaker": "user", "reasoning": "stand-in"}
SIDE_USAGE = Usage(input=77, output=5)  # what each side question is said to cost: in no turn's answer


@dataclass(frozen=True, slots=True)
class Call:
    """Reply with a call of the tool `name` (the CLI runs it, asking first when its policy says so)."""

    name: str
    args: dict[str, Any]
    usage: Usage | None = None  # None: the API's minimum (1 in, 1 out)


@dataclass(frozen=True, slots=True)
class GeminiRequest(Request):
    @property
    def is_turn(self) -> bool:
        return self.method == "POST" and urlsplit(self.path).path.endswith(":streamGenerateContent")

    @property
    def is_side_question(self) -> bool:
        """One of Gemini's side questions (`:generateContent`), beside its turns."""
        return self.method == "POST" and urlsplit(self.path).path.endswith(":generateContent")

    @property
    def model(self) -> str:
        """The model the request names (`/v1beta/models/<model>:<method>`)."""
        return urlsplit(self.path).path.rpartition("/models/")[2].partition(":")[0]

    def user_texts(self) -> list[str]:
        """The text parts of the user contents, in order (function responses left out)."""
        contents = self.body.get("contents", []) if isinstance(self.body, dict) else []
        return [
            part["text"]
            for content in contents
            if content.get("role") == "user"
            for part in content.get("parts", [])
            if isinstance(part.get("text"), str)
        ]


class GeminiStandIn(OpenAIStandIn):
    request_type = GeminiRequest

    @property
    def base_url(self) -> str:
        """What `GOOGLE_GEMINI_BASE_URL` takes (Gemini CLI adds `/v1beta/models/…`)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def reply(self, number: int, behaviour: Any) -> bytes:
        if isinstance(behaviour, Call):
            part = {"functionCall": {"name": behaviour.name, "args": behaviour.args}}
            return b"data: " + json.dumps(_response(part=part, usage=behaviour.usage)).encode() + b"\r\n\r\n"
        return super().reply(number, behaviour)

    def answer(self, number: int, text: str, usage: Usage | None = None) -> bytes:
        return b"data: " + json.dumps(_response(text, usage=usage)).encode() + b"\r\n\r\n"

    def failure(self, behaviour: Fail) -> dict[str, Any]:
        return {"error": {"code": behaviour.status, "message": behaviour.message, "status": "INVALID_ARGUMENT"}}

    def minimal(self, request: Request) -> tuple[int, dict[str, str], bytes]:
        path = urlsplit(request.path).path
        if path.endswith(":generateContent"):
            side = _response(json.dumps(_SIDE_ANSWER), usage=SIDE_USAGE)
            return 200, {"Content-Type": "application/json"}, json.dumps(side).encode()
        if path.endswith(":countTokens"):
            return 200, {"Content-Type": "application/json"}, b'{"totalTokens": 1}'
        return 404, {"Content-Type": "application/json"}, b'{"error": {"code": 404, "message": "not in the stand-in"}}'


def _response(text: str = "", *, part: dict[str, Any] | None = None, usage: Usage | None = None) -> dict[str, Any]:
    content = {"role": "model", "parts": [part or {"text": text}]}
    return {
        "candidates": [{"content": content, "finishReason": "STOP", "index": 0}],
        "usageMetadata": usage_metadata(usage or Usage()),
        "modelVersion": "gemini-standin",
    }


def usage_metadata(usage: Usage) -> dict[str, int]:
    """`usage` in the Gemini API's fields (a zero count left out, as the API leaves it)."""
    fields = {
        "promptTokenCount": usage.input,
        "candidatesTokenCount": usage.output - usage.reasoning,
        "cachedContentTokenCount": usage.cached,
        "thoughtsTokenCount": usage.reasoning,
        "totalTokenCount": usage.input + usage.output,
    }
    return {name: count for name, count in fields.items() if count}
