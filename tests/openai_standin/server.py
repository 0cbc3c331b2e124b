"""The stand-in's HTTP server on 127.0.0.1: `POST /v1/responses` and `POST /v1/chat/completions`
answered from a script over SSE, everything else minimally, every request logged.

Codex (a custom `model_providers` entry with `wire_api = "responses"`) streams each turn: the
stand-in answers `response.created`, the assistant message as `response.output_item.done`, then
`response.completed`, which ends the turn. opencode's OpenAI-compatible provider
(`@ai-sdk/openai-compatible`) streams Chat Completions: chunks with the text as a `delta`, one with
`finish_reason: stop` and the usage, then `data: [DONE]`.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit


@dataclass(frozen=True, slots=True)
class Usage:
    """What a turn says it cost (Responses: `response.completed`'s usage; Chat Completions: the last
    chunk's): `input` counts the cached tokens too, and `output` the reasoning tokens, as both APIs
    count them."""

    input: int = 1
    output: int = 1
    cached: int = 0
    reasoning: int = 0

    def fields(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input,
            "input_tokens_details": {"cached_tokens": self.cached},
            "output_tokens": self.output,
            "output_tokens_details": {"reasoning_tokens": self.reasoning},
            "total_tokens": self.input + self.output,
        }

    def chat_fields(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.input,
            "prompt_tokens_details": {"cached_tokens": self.cached},
            "completion_tokens": self.output,
            "completion_tokens_details": {"reasoning_tokens": self.reasoning},
            "total_tokens": self.input + self.output,
        }


@dataclass(frozen=True, slots=True)
class Say:
    """Reply with text and end the turn."""

    text: str = "Done."
    usage: Usage | None = None  # None: the API's minimum (1 in, 1 out)


@dataclass(frozen=True, slots=True)
class Busy:
    """Hold the request `seconds` (or until released), then answer `then` (text, or a tool call)."""

    seconds: float
    then: Say | Call = Say()


@dataclass(frozen=True, slots=True)
class Fail:
    """Answer an HTTP error; Codex retries 5xx a few times, 400 never."""

    status: int = 400
    message: str = "scripted failure"


@dataclass(frozen=True, slots=True)
class Call:
    """Ask for one tool call: `name` with `arguments`, then end the turn for it (Chat Completions: a
    `tool_calls` delta; Responses: a `function_call` output item)."""

    name: str
    arguments: str = "{}"  # JSON text, as the API carries it
    usage: Usage | None = None


Behaviour = Say | Busy | Fail | Call


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def is_turn(self) -> bool:
        return self.method == "POST" and urlsplit(self.path).path.endswith(("/responses", "/chat/completions"))

    @property
    def is_side(self) -> bool:
        """A turn request the agent makes beside its loop: it carries no tools."""
        return self.is_turn and not (isinstance(self.body, dict) and self.body.get("tools"))

    @property
    def is_chat(self) -> bool:
        return urlsplit(self.path).path.endswith("/chat/completions")

    def user_texts(self) -> list[str]:
        """The text of the user messages in `input` (Responses) or `messages` (Chat Completions), in order."""
        texts: list[str] = []
        body: dict[str, Any] = self.body if isinstance(self.body, dict) else {}
        for item in body.get("input", body.get("messages")) or []:
            if item.get("type", "message") != "message" or item.get("role") != "user":
                continue
            content = item.get("content")
            if isinstance(content, str):
                texts.append(content)
                continue
            texts += [part.get("text", "") for part in content or [] if part.get("type") in {"input_text", "text"}]
        return texts


@dataclass(frozen=True, slots=True)
class Reply:
    """A turn request answered with a reply, and the usage the reply said it cost (a Chat Completions
    reply's is always the API's minimum)."""

    request: Request
    usage: Usage


class OpenAIStandIn:
    """Subclassed for another API (tests/gemini_standin/): its `request_type`, `base_url`, `answer`,
    `failure` and `minimal`."""

    request_type: type[Request] = Request

    def __init__(self, fallback: Behaviour | None = None, *, side: Say | None = None) -> None:
        self.fallback: Behaviour = fallback or Say("OK")
        # given: a turn request carrying no tools (Codex's task title) is answered with it, off the script
        self.side = side
        self.log: list[Request] = []
        self._replies: list[Reply] = []
        self._queue: deque[Behaviour] = deque()
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._turns = 0
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.standin = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def script(self, *behaviours: Behaviour) -> None:
        with self._lock:
            self._queue.extend(behaviours)

    def turns(self) -> list[Request]:
        with self._lock:
            return [r for r in self.log if r.is_turn]

    def loop_turns(self) -> list[Request]:
        """The turn requests of the agent's own loop, without the ones it makes beside it (Codex's task
        title, asked for beside each prompt and racing it to the stand-in)."""
        return [r for r in self.turns() if not r.is_side]

    def replies(self) -> list[Reply]:
        """Every turn request answered with a reply (the agent loop's and the side ones; no failure), in
        the order the replies were made, with what each said it cost."""
        with self._lock:
            return list(self._replies)

    def reset(self, fallback: Behaviour | None = None) -> None:
        with self._lock:
            self.log.clear()
            self._replies.clear()
            self._queue.clear()
            self.fallback = fallback or Say("OK")

    def release(self) -> None:
        with self._lock:
            held, self._release = self._release, threading.Event()
        held.set()

    def close(self) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()

    def handle(self, request: Request) -> tuple[int, dict[str, str], bytes]:
        with self._lock:
            self.log.append(request)
            if not request.is_turn:
                return self.minimal(request)
            self._turns += 1
            if self.side is not None and request.is_side:
                behaviour: Behaviour = self.side
            else:
                behaviour = self._queue.popleft() if self._queue else self.fallback
            number, release = self._turns, self._release
        if isinstance(behaviour, Busy):
            release.wait(behaviour.seconds)
            behaviour = behaviour.then
        if isinstance(behaviour, Fail):
            return behaviour.status, {"Content-Type": "application/json"}, json.dumps(self.failure(behaviour)).encode()
        stream = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        if isinstance(behaviour, Call):
            body = call_sse(number, behaviour) if request.is_chat else function_call_sse(number, behaviour)
        else:
            body = (
                chat_sse(number, behaviour.text, behaviour.usage) if request.is_chat else self.reply(number, behaviour)
            )
        served = behaviour.usage or Usage()
        with self._lock:
            self._replies.append(Reply(request, served))
        return 200, stream, body

    def reply(self, number: int, behaviour: Any) -> bytes:
        """The body answering a turn scripted `behaviour` (a `Say`; a subclass may know more)."""
        return self.answer(number, behaviour.text, behaviour.usage)

    def answer(self, number: int, text: str, usage: Usage | None = None) -> bytes:
        return sse(number, text, usage)

    def failure(self, behaviour: Fail) -> dict[str, Any]:
        return {"error": {"type": "invalid_request_error", "code": None, "message": behaviour.message}}

    def minimal(self, request: Request) -> tuple[int, dict[str, str], bytes]:
        return _minimal(request)


_CHAT_USAGE = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}


def _chat_usage(usage: Usage | None) -> dict[str, Any]:
    return _CHAT_USAGE if usage is None else usage.chat_fields()


def chat_sse(number: int, text: str, usage: Usage | None = None) -> bytes:
    """One streamed Chat Completions turn: the role, the text, the stop with its usage, [DONE]."""
    head = {"id": f"chatcmpl-standin-{number:04d}", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    chunks = [
        head | {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]},
        head | {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]},
        head | {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": _chat_usage(usage)},
    ]
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def call_sse(number: int, call: Call) -> bytes:
    """One streamed Chat Completions turn asking for a tool call."""
    head = {"id": f"chatcmpl-standin-{number:04d}", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    function = {"name": call.name, "arguments": call.arguments}
    tool = {"index": 0, "id": f"call_standin_{number:04d}", "type": "function", "function": function}
    chunks = [
        head | {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [tool]}, "finish_reason": None}]},
        head
        | {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}], "usage": _chat_usage(call.usage)},
    ]
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def function_call_sse(number: int, call: Call) -> bytes:
    """One streamed Responses turn asking for a function call (Codex runs it, then asks again)."""
    item = {
        "type": "function_call",
        "id": f"fc_standin_{number:04d}",
        "call_id": f"call_standin_{number:04d}",
        "name": call.name,
        "arguments": call.arguments,
        "status": "completed",
    }
    return _responses_sse(number, item, usage=call.usage)


def sse(number: int, text: str, usage: Usage | None = None) -> bytes:
    """One streamed turn: created, the message, completed."""
    message = {
        "type": "message",
        "id": f"msg_standin_{number:04d}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    return _responses_sse(number, message, text, usage=usage)


def _responses_sse(number: int, item: dict[str, Any], text: str = "", *, usage: Usage | None = None) -> bytes:
    """created, the item added (and its text's delta), the item done, completed with its usage."""
    response_id = f"resp_standin_{number:04d}"
    added: dict[str, Any] = item | {"status": "in_progress"} | ({"content": []} if "content" in item else {})
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": response_id}},
        {"type": "response.output_item.added", "output_index": 0, "item": added},
    ]
    if item["type"] == "message":
        delta = {"output_index": 0, "content_index": 0, "item_id": item["id"], "delta": text}
        events.append({"type": "response.output_text.delta"} | delta)
    events += [
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {
            "type": "response.completed",
            "response": {
                "id": response_id,
                "status": "completed",
                "output": [item],
                "usage": (usage or Usage()).fields(),
            },
        },
    ]
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def _minimal(request: Request) -> tuple[int, dict[str, str], bytes]:
    if request.method == "GET" and urlsplit(request.path).path.endswith("/models"):
        return 200, {"Content-Type": "application/json"}, json.dumps({"models": [], "data": []}).encode()
    return 404, {"Content-Type": "application/json"}, b'{"error": {"message": "not in the stand-in"}}'


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    standin: OpenAIStandIn

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # Codex killed mid-request is expected


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _serve(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        status, headers, payload = self.server.standin.handle(
            self.server.standin.request_type(self.command, self.path, dict(self.headers), body)
        )
        self.send_response(status)
        for name, value in (headers | {"Content-Length": str(len(payload))}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)
