"""The agent a campaign drives, one plug each: its harness entry and environment (with its model
API's stand-in, for a real agent), and what it received, read from its own records.

A plug (`Agent`) gives the campaign:
- `setup(root, record)`: start what the agent needs offline (its API stand-in, a home), and return
  the `routing.harnesses` entry (named `name`) and the environment the poller — and so the tmux
  server and every pane — runs with;
- `tap()`: called every few tens of milliseconds and once at the end: turn the agent's own records
  into the campaign's record lines (`ready`, `prompt`), which the aimed kills and the tally read;
- `taken(token)`: how many times each conversation received a comment's token, and `notes()`.

The simulator records itself. A real agent runs under `wrapper.py` (its process record) and is read
twice: its hooks' `UserPromptSubmit` receipts (one per submitted prompt, copied before the-loop
removes an old spawn's folder) and its API stand-in's log of model requests (each holds the whole
conversation so far: a turn counts once per conversation, however many later requests repeat it).
A conversation received a token as often as the larger of the two says; a prompt only the hook saw
(the agent died before asking its model) is received, and said in the notes.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from adapters.agents.receipt_line import SUFFIX
from adapters.receipts.hook_json import receipt_of
from bench.chaos.account import Taken, taken_by_runs
from bench.chaos.records import HarnessRun, JsonlTail
from domain.receipts import ReceiptKind

ROOT = Path(__file__).resolve().parents[2]
SIM = ROOT / "tests" / "harness_sim.py"
WRAPPER = Path(__file__).resolve().with_name("wrapper.py")
REMEMBER = ("--remember", "--peers")  # resumable conversations; a harness says what else ran at its start
TAP_SECONDS = 0.05
UNNAMED = ""  # the conversation of a model request that does not say which it is (Gemini's)


class Agent(Protocol):
    @property
    def name(self) -> str:
        """Its routing.harnesses key: a built-in's name lays the entry over the built-in."""

    @property
    def confirms(self) -> bool:
        """It gives receipts: a duplicate is a defect (without, at-least-once is the promise)."""

    @property
    def settle_seconds(self) -> float:
        """How long the last poller gets to resolve every comment the campaign posted."""

    def setup(self, root: Path, record: Path) -> tuple[dict[str, Any], dict[str, str]]: ...

    def tap(self) -> None: ...

    def taken(self, runs: list[HarnessRun]) -> Taken: ...

    def notes(self, tokens: Iterable[str]) -> list[str]: ...

    def close(self) -> None: ...


@dataclass
class Simulator:
    """tests/harness_sim.py: it records what reached its terminal itself."""

    receipts: str = "file"
    name: str = "sim"
    settle_seconds: float = 180.0
    turn_ends: bool = False  # each prompt's turn ends at once: idle agents, for hibernation

    @property
    def confirms(self) -> bool:
        return self.receipts != "none"

    def setup(self, root: Path, record: Path) -> tuple[dict[str, Any], dict[str, str]]:
        quick = self.receipts == "none"  # without receipts a confirmation is a wait: keep it short
        ends = ["--turn-ends"] if self.turn_ends else []
        entry = {
            "binary": sys.executable,
            "args": [str(SIM), "--record", str(record), "--known-ids", str(root / "known-ids"), *REMEMBER, *ends],
            "sessionIdArgs": ["--session-id", "{session_id}"],
            "resumeArgs": ["--resume", "{session_id}"],
            "receipts": self.receipts,
            "readySeconds": 1 if quick else 10,
            "confirmSeconds": 1 if quick else 5,
        }
        return entry, {}

    def tap(self) -> None:
        pass

    def taken(self, runs: list[HarnessRun]) -> Taken:
        return taken_by_runs(runs)

    def notes(self, tokens: Iterable[str]) -> list[str]:
        return []

    def close(self) -> None:
        pass


@dataclass(frozen=True, slots=True)
class ModelTurn:
    """One model request of an agent's own loop: its conversation and the user texts it carried."""

    conversation: str
    texts: tuple[str, ...]


@dataclass
class HookTap:
    """Reads the receipts the agent's hooks write into each spawn's folder (found in the agent's
    argv, or the environment its hooks read) and appends `ready` and `prompt` lines to the record, each receipt once,
    with the time its hook wrote it (`at`)."""

    record: Path
    receipts_root: Path
    prompts: list[tuple[str, str]] = field(default_factory=list)  # (conversation, text), one per submission
    _starts: JsonlTail | None = None
    _folders: dict[Path, int] = field(default_factory=dict)
    _seen: set[Path] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self) -> None:
        with self._lock:
            if self._starts is None:
                self._starts = JsonlTail(self.record)
            shape = re.compile(re.escape(str(self.receipts_root)) + r"/([A-Za-z0-9._-]+)/([A-Za-z0-9._-]+)")
            for line in self._starts.new():
                if line.get("kind") == "start":
                    found = shape.search(" ".join([*line.get("argv", []), *line.get("env", [])]))
                    if found:
                        self._folders[self.receipts_root / found[1] / found[2]] = line["pid"]
            lines = []
            for folder, pid in self._folders.items():
                try:
                    names = sorted(e.name for e in os.scandir(folder) if e.name.endswith(SUFFIX))
                except OSError:
                    continue
                for name in names:
                    path = folder / name
                    if path in self._seen:
                        continue
                    self._seen.add(path)
                    try:
                        receipt = receipt_of(name.removesuffix(SUFFIX), path.read_text(errors="replace"))
                    except OSError:
                        continue
                    if receipt is None:
                        continue
                    at = receipt.at.isoformat() if receipt.at else None  # when its hook wrote it
                    if receipt.kind is ReceiptKind.READY:
                        lines.append({"kind": "ready", "pid": pid, "conversation": receipt.conversation, "at": at})
                    elif receipt.kind is ReceiptKind.PROMPT:
                        self.prompts.append((receipt.conversation, receipt.prompt))
                        lines.append({"kind": "prompt", "pid": pid, "text": receipt.prompt, "at": at})
            if lines:
                with self.record.open("a", encoding="utf-8") as file:
                    file.write("".join(json.dumps(line) + "\n" for line in lines))


@dataclass
class RealAgent:
    """A real agent CLI under the wrapper, its hooks tapped, its model API a stand-in: a subclass
    starts the stand-in (`setup`) and reads its log (`turns`)."""

    name: str = ""
    binary: Path = Path()
    hooks: HookTap | None = None
    confirms: bool = True
    settle_seconds: float = 180.0
    standin: Any = None  # its model API's stand-in, started by `setup`

    def setup(self, root: Path, record: Path) -> tuple[dict[str, Any], dict[str, str]]:
        raise NotImplementedError

    @staticmethod
    def turns_in(log: list[Any]) -> list[ModelTurn]:
        """The turns of the agent's own loop among the requests its stand-in logged."""
        raise NotImplementedError

    def turns(self) -> list[ModelTurn]:
        return self.turns_in(list(self.standin.log)) if self.standin else []

    def wrapped(self, root: Path, record: Path, *args: str) -> dict[str, Any]:
        """The entry running the agent under the wrapper: `args`, the built-in's own (the entry's replace them)."""
        self.hooks = HookTap(record, root / "state" / "receipts")
        return {"binary": sys.executable, "args": [str(WRAPPER), str(record), str(self.binary), *args]}

    def tap(self) -> None:
        if self.hooks is not None:
            self.hooks()

    def counts(self, token: str) -> tuple[Counter[str], Counter[str]]:
        """Per conversation: prompts its hooks saw holding `token`; the most times one model request held it."""
        hooks: Counter[str] = Counter()
        for conversation, text in self.hooks.prompts if self.hooks else []:
            hooks[conversation] += text.count(token)
        model: Counter[str] = Counter()
        for turn in self.turns():
            model[turn.conversation] = max(model[turn.conversation], sum(t.count(token) for t in turn.texts))
        return +hooks, +model

    def taken(self, runs: list[HarnessRun]) -> Taken:
        def by_conversation(token: str) -> Mapping[str, int]:
            hooks, model = self.counts(token)
            named = {c: max(hooks[c], model[c]) for c in {*hooks, *model} if c != UNNAMED}
            most = model[UNNAMED]  # requests that name no conversation: the most one request held
            if most > max(named.values(), default=0):
                # some conversation held it `most` times: the one the hooks name, when there is one
                named[next(iter(named)) if len(named) == 1 else UNNAMED] = most
            return named

        return by_conversation

    def notes(self, tokens: Iterable[str]) -> list[str]:
        hook_only, model_only = [], []
        for token in tokens:
            hooks, model = self.counts(token)
            if hooks and not model:
                hook_only.append(token)
            if model and not hooks:
                model_only.append(token)
        return [
            f"{self.name}: {len(self.turns())} model requests; prompts its hook confirmed that never reached "
            f"the model (it died first): {len(hook_only)} {' '.join(hook_only)}".rstrip(),
            f"{self.name}: in a model request without a hook receipt: {len(model_only)} "
            f"{' '.join(model_only[:5])}".rstrip(),
        ]

    def close(self) -> None:
        if self.standin:
            self.standin.close()


def openai_turns(log: list[Any]) -> list[ModelTurn]:
    """Codex's turns: Responses API requests of the conversation itself (a thread-title request
    repeats the prompt under an id of its own: left out), by `prompt_cache_key`."""
    turns = []
    for request in list(log):
        if not request.is_turn or not isinstance(request.body, dict):
            continue
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            meta = json.loads(headers.get("x-codex-turn-metadata", "{}"))
        except ValueError:
            meta = {}
        if meta.get("thread_source") == "thread_title":
            continue
        conversation = str(request.body.get("prompt_cache_key") or headers.get("session-id", ""))
        turns.append(ModelTurn(conversation, tuple(request.user_texts())))
    return turns


@dataclass
class Codex(RealAgent):
    """The pinned Codex against tests/openai_standin, as tests/codex/rig.py runs it."""

    name: str = "codex"
    turns_in = staticmethod(openai_turns)

    def setup(self, root: Path, record: Path) -> tuple[dict[str, Any], dict[str, str]]:
        from tests.codex.rig import codex_home
        from tests.openai_standin.server import OpenAIStandIn
        from tests.pinned_tools import installed

        self.binary = self.binary if self.binary != Path() else installed("codex")
        self.standin = OpenAIStandIn()
        home = root / "home"
        folder = codex_home(home / ".codex", self.standin.base_url)
        env = {"HOME": str(home), "CODEX_HOME": str(folder), "OPENAI_API_KEY": "sk-standin", "LANG": "C.UTF-8"}
        return self.wrapped(root, record), env


def anthropic_turns(log: list[Any]) -> list[ModelTurn]:
    """Claude Code's turns: Messages API requests of its own loop (they carry tools), by the
    session id its headers or metadata name."""
    turns = []
    for request in list(log):
        if request.kind.value != "turn" or not isinstance(request.body, dict):
            continue
        headers = {k.lower(): v for k, v in request.headers.items()}
        conversation = headers.get("x-claude-code-session-id", "")
        if not conversation:
            user = str((request.body.get("metadata") or {}).get("user_id", ""))
            found = re.search(r"session_?\W*([0-9a-f-]{36})", user)
            conversation = found[1] if found else user
        turns.append(ModelTurn(conversation, tuple(request.user_texts())))
    return turns


@dataclass
class Claude(RealAgent):
    """The pinned Claude Code against tests/anthropic_standin, as tests/claude/ runs it."""

    name: str = "claude"
    turns_in = staticmethod(anthropic_turns)

    def setup(self, root: Path, record: Path) -> tuple[dict[str, Any], dict[str, str]]:
        from tests.anthropic_standin.server import AnthropicStandIn
        from tests.claude.home import ClaudeHome, claude_env
        from tests.pinned_tools import installed

        self.binary = self.binary if self.binary != Path() else installed("claude_code")
        self.standin = AnthropicStandIn()
        env = claude_env(ClaudeHome(root / "home"), self.standin.base_url)
        env.pop("PATH")  # the poller's own: it runs Python and tmux
        return self.wrapped(root, record), env


def gemini_turns(log: list[Any]) -> list[ModelTurn]:
    """Gemini CLI's turns: `streamGenerateContent` requests. The Gemini API is told no session, so
    a turn's conversation is unnamed: the hooks' receipts name it (`RealAgent.taken`)."""
    return [ModelTurn(UNNAMED, tuple(request.user_texts())) for request in list(log) if request.is_turn]


@dataclass
class Gemini(RealAgent):
    """The pinned Gemini CLI against tests/gemini_standin, as tests/gemini/ runs it."""

    name: str = "gemini"
    turns_in = staticmethod(gemini_turns)
    # each paste waits `submitDelayMs` (3 s) for its Enter: the campaign's burst outlasts 180 s
    # (seed 2654666123: 100 of 424 comments still being delivered when it ended)
    settle_seconds: float = 900.0

    def setup(self, root: Path, record: Path) -> tuple[dict[str, Any], dict[str, str]]:
        from tests.gemini.rig import gemini_env, gemini_home
        from tests.gemini_standin.server import GeminiStandIn
        from tests.pinned_tools import installed

        self.binary = self.binary if self.binary != Path() else installed("gemini")
        self.standin = GeminiStandIn()
        gemini_home(root / "home")  # its sign-in chosen, as a user does once
        env = gemini_env(root / "home", self.standin.base_url)
        env.pop("PATH")  # the poller's own: it runs Python, tmux and node
        return self.wrapped(root, record, "--skip-trust"), env


def chat_turns(log: list[Any]) -> list[ModelTurn]:
    """opencode's turns: Chat Completions requests, by the session their `x-session-id` names."""
    turns = []
    for request in list(log):
        if not request.is_turn:
            continue
        headers = {k.lower(): v for k, v in request.headers.items()}
        conversation = headers.get("x-session-id") or UNNAMED
        turns.append(ModelTurn(conversation, tuple(request.user_texts())))
    return turns


@dataclass
class Opencode(RealAgent):
    """The pinned opencode against tests/openai_standin (Chat Completions), as tests/opencode/ runs it."""

    name: str = "opencode"
    turns_in = staticmethod(chat_turns)

    def setup(self, root: Path, record: Path) -> tuple[dict[str, Any], dict[str, str]]:
        from tests.openai_standin.server import OpenAIStandIn
        from tests.opencode.rig import opencode_env, opencode_home
        from tests.pinned_tools import installed

        self.binary = self.binary if self.binary != Path() else installed("opencode")
        self.standin = OpenAIStandIn()
        opencode_home(root / "home", self.standin.base_url)
        env = opencode_env(root / "home")
        env.pop("PATH")
        return self.wrapped(root, record), env


AGENTS: dict[str, Callable[[], Agent]] = {
    "sim": Simulator,
    "codex": Codex,
    "claude": Claude,
    "gemini": Gemini,
    "opencode": Opencode,
}
