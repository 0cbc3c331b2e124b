"""The stand-in's HTTP server on 127.0.0.1: routes, the scripted queue, and a log of every request."""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass
from enum import Enum
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from tests.anthropic_standin import stream
from tests.anthropic_standin.script import Answer, Behaviour, Say, Usage, answer, said


class Kind(Enum):
    """What a request was for."""

    TURN = "turn"  # a model request of the agent's own loop: it carries the tools
    SIDE = "side"  # a model request without tools (titles, summaries): answered, never scripted
    COUNT_TOKENS = "count_tokens"
    MODELS = "models"
    UNKNOWN = "unknown"  # answered 404; a test can insist there are none


@dataclass(frozen=True, slots=True)
class Request:
    kind: Kind
    method: str
    path: str
    headers: dict[str, str]
    body: Any

    def user_texts(self) -> list[str]:
        """The text blocks of the user messages, in order (a turn's prompts and tool results)."""
        texts: list[str] = []
        for entry in (self.body or {}).get("messages", []):
            content = entry.get("content")
            if entry.get("role") != "user":
                continue
            blocks = [stream.text_block(content)] if isinstance(content, str) else content
            texts += [block["text"] for block in blocks if block.get("type") == "text"]
        return texts


@dataclass(frozen=True, slots=True)
class Reply:
    """A model request answered with a reply, and the usage the reply said it cost."""

    request: Request
    usage: Usage


class AnthropicStandIn:
    """Answers each agent-loop model request with the next scripted behaviour (`fallback` when
    none is left), and everything else minimally."""

    def __init__(self, fallback: Behaviour | None = None) -> None:
        self.fallback: Behaviour = fallback or Say("OK")
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
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def script(self, *behaviours: Behaviour) -> None:
        with self._lock:
            self._queue.extend(behaviours)

    def requests(self, kind: Kind | None = None) -> list[Request]:
        with self._lock:
            return [r for r in self.log if kind is None or r.kind is kind]

    def turns(self) -> list[Request]:
        """The agent loop's own model requests, as the OpenAI stand-in's `loop_turns` are."""
        return self.requests(Kind.TURN)

    def replies(self) -> list[Reply]:
        """Every model request answered with a reply (the agent loop's and the side ones; no failure),
        in the order the replies were made, with what each said it cost."""
        with self._lock:
            return list(self._replies)

    def reset(self, fallback: Behaviour | None = None) -> None:
        """Forget the log and the script (one stand-in serves a module's tests, one test at a time)."""
        with self._lock:
            self.log.clear()
            self._replies.clear()
            self._queue.clear()
            self.fallback = fallback or Say("OK")

    def release(self) -> None:
        """Busy requests held now answer at once."""
        with self._lock:
            held, self._release = self._release, threading.Event()
        held.set()

    def close(self) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()

    def handle(self, method: str, path: str, headers: dict[str, str], body: Any) -> Answer:
        kind = _kind(method, path, body)
        request = Request(kind, method, path, headers, body)
        with self._lock:
            self.log.append(request)
            behaviour: Behaviour = Say("OK")  # a side request's
            if kind is Kind.TURN:
                self._turns += 1
                behaviour = self._queue.popleft() if self._queue else self.fallback
            number, release = self._turns, self._release
        if kind not in {Kind.TURN, Kind.SIDE}:
            return _minimal(kind)
        streamed = isinstance(body, dict) and bool(body.get("stream"))
        reply = answer(behaviour, number=number if kind is Kind.TURN else 0, streamed=streamed, release=release)
        usage = said(behaviour)
        if usage is not None:
            with self._lock:
                self._replies.append(Reply(request, usage))
        return reply


def _kind(method: str, path: str, body: Any) -> Kind:
    route = urlsplit(path).path
    if method == "POST" and route == "/v1/messages":
        return Kind.TURN if isinstance(body, dict) and body.get("tools") else Kind.SIDE
    if method == "POST" and route == "/v1/messages/count_tokens":
        return Kind.COUNT_TOKENS
    if method == "GET" and route.startswith("/v1/models"):
        return Kind.MODELS
    return Kind.UNKNOWN


def _minimal(kind: Kind) -> Answer:
    json_type = {"Content-Type": "application/json"}
    if kind is Kind.COUNT_TOKENS:
        return Answer(200, json.dumps({"input_tokens": 1}).encode(), json_type)
    if kind is Kind.MODELS:
        model = {"type": "model", "id": stream.MODEL, "display_name": "Stand-in", "created_at": "2025-01-01T00:00:00Z"}
        page = {"data": [model], "has_more": False, "first_id": stream.MODEL, "last_id": stream.MODEL}
        return Answer(200, json.dumps(page).encode(), json_type)
    return Answer(404, json.dumps(stream.error("not_found_error", "not in the stand-in")).encode(), json_type)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    standin: AnthropicStandIn

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # Claude killed mid-request (the resume facts) is expected


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the stand-in's log is the record

    def _serve(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        reply = self.server.standin.handle(self.command, self.path, dict(self.headers), body)
        self.send_response(reply.status)
        for name, value in (reply.headers | {"Content-Length": str(len(reply.body))}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(reply.body)
