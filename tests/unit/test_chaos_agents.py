"""The kill campaign with a real agent (bench/chaos/agents.py, wrapper.py) counts
what the agent received from its own records — its hooks' receipts and its model API's requests —
once per conversation turn, and knows its processes from the wrapper's lines."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from adapters.agents.receipt_line import hook_command
from adapters.harnesses.codex.hooks import arguments
from adapters.harnesses.opencode.plugin import channel
from bench.chaos.account import Sent, Tally, count_comments, count_deaths
from bench.chaos.agents import UNNAMED, WRAPPER, HookTap, ModelTurn, RealAgent, chat_turns, gemini_turns, openai_turns
from bench.chaos.records import HarnessRun, harness_runs, running
from tests.gemini_standin.server import GeminiRequest
from tests.openai_standin.server import Request

A, B = Sent("11", "CHAOS00000x"), Sent("12", "CHAOS00001x")
ENV = "<environment_context>...</environment_context>"


class Scripted(RealAgent):
    """A real agent's accounting over model turns and hook prompts given as values."""

    def __init__(self, turns: list[ModelTurn], prompts: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(name="scripted")
        self._turns = turns
        self.hooks = HookTap(Path("/nonexistent"), Path("/nonexistent"), prompts=list(prompts))

    def turns(self) -> list[ModelTurn]:
        return self._turns


def tally(agent: RealAgent) -> Tally:
    found = Tally()
    count_comments([A, B], [], [], found, agent.taken([]))
    return found


def test_a_turn_every_later_request_of_its_conversation_repeats_is_taken_once() -> None:
    turns = [
        ModelTurn("c1", (ENV, f"please {A.token}")),
        ModelTurn("c1", (ENV, f"please {A.token}", f"and {B.token}")),
        ModelTurn("c1", (ENV, f"please {A.token}", f"and {B.token}", "more")),
    ]
    found = tally(Scripted(turns))
    assert (found.delivered, found.duplicated, found.lost) == (2, [], [])


def test_a_comment_in_two_turns_of_one_conversation_or_in_two_conversations_is_duplicated() -> None:
    twice = Scripted([ModelTurn("c1", (f"x {A.token}", f"y {A.token}")), ModelTurn("c1", (B.token,))])
    (entry,) = tally(twice).duplicated
    assert entry.startswith(A.token) and entry.endswith("taken 2 times, by one harness")
    two = Scripted([ModelTurn("c1", (A.token, B.token)), ModelTurn("c2", (A.token,))])
    (entry,) = tally(two).duplicated
    assert entry.startswith(A.token) and entry.endswith("by 2 harnesses")


def test_a_prompt_only_its_hook_saw_is_received_and_said_in_the_notes() -> None:
    agent = Scripted([ModelTurn("c1", (A.token,))], prompts=[("c1", A.token), ("c2", B.token)])
    found = tally(agent)
    assert (found.delivered, found.lost, found.duplicated) == (2, [], [])
    assert "never reached the model (it died first): 1" in agent.notes([A.token, B.token])[0]


def test_two_hook_prompts_holding_a_comment_are_a_duplicate_even_if_one_request_shows_it() -> None:
    agent = Scripted([ModelTurn("c1", (A.token, B.token))], prompts=[("c1", A.token), ("c1", A.token)])
    assert [entry.split()[0] for entry in tally(agent).duplicated] == [A.token]


def test_turns_that_name_no_conversation_count_for_the_one_the_hooks_name() -> None:
    # Gemini's model requests say no conversation: its hooks' receipts do
    once = Scripted([ModelTurn(UNNAMED, (A.token,)), ModelTurn(UNNAMED, (A.token, B.token))], prompts=[("c1", A.token)])
    found = tally(once)
    assert (found.delivered, found.duplicated, found.lost) == (2, [], [])  # B: in a request, its hook cut short
    twice = Scripted([ModelTurn(UNNAMED, (A.token, A.token))], prompts=[("c1", A.token)])
    (entry,) = tally(twice).duplicated
    assert entry.startswith(A.token) and entry.endswith("taken 2 times, by one harness")
    unseen = Scripted([ModelTurn(UNNAMED, (A.token, A.token))])
    assert len(tally(unseen).duplicated) == 1  # no hook named it: still twice in one conversation


def test_gemini_turns_are_its_stream_requests_and_opencode_turns_are_keyed_by_their_session() -> None:
    contents = {"contents": [{"role": "user", "parts": [{"text": A.token}]}]}
    stream = GeminiRequest("POST", "/v1beta/models/m:streamGenerateContent?alt=sse", {}, contents)
    side = GeminiRequest("POST", "/v1beta/models/m:generateContent", {}, contents)  # "who speaks next?"
    assert gemini_turns([stream, side]) == [ModelTurn(UNNAMED, (A.token,))]
    chat = {"messages": [{"role": "user", "content": A.token}]}
    named = Request("POST", "/v1/chat/completions", {"X-Session-Id": "ses_1"}, chat)
    title = Request("POST", "/v1/chat/completions", {}, chat)  # a title request names no session
    assert chat_turns([named, title]) == [ModelTurn("ses_1", (A.token,)), ModelTurn(UNNAMED, (A.token,))]


def request(body: dict[str, Any], source: str) -> Request:
    headers = {"x-codex-turn-metadata": json.dumps({"thread_source": source})}
    return Request("POST", "/v1/responses", headers, body)


def test_codex_thread_title_requests_are_not_turns_and_a_turn_is_keyed_by_its_conversation() -> None:
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": A.token}]}
    turn = request({"prompt_cache_key": "c1", "input": [user]}, "user")
    title = request({"prompt_cache_key": "t9", "input": [user]}, "thread_title")
    assert openai_turns([turn, title]) == [ModelTurn("c1", (A.token,))]


def receipt(folder: Path, event: dict[str, Any]) -> None:
    """Written by the very shell line the-loop hands the agent as its hook."""
    subprocess.run(["sh", "-c", hook_command(folder)], input=json.dumps(event), text=True, check=True, timeout=10)


def test_the_hook_tap_turns_each_receipt_into_one_line_of_the_agent_whose_argv_names_its_folder(
    tmp_path: Path,
) -> None:
    root, record = tmp_path / "state" / "receipts", tmp_path / "harness.jsonl"
    folder = root / "github-sandbox-chaos-1" / "spawn-1"
    folder.mkdir(parents=True)
    start = {"kind": "start", "pid": 41, "cwd": "/w/1", "argv": [*arguments(folder), "resume", "c1"]}
    record.write_text(json.dumps(start) + "\n", encoding="utf-8")
    tap = HookTap(record, root)
    receipt(folder, {"hook_event_name": "SessionStart", "session_id": "c1", "source": "resume"})
    receipt(folder, {"hook_event_name": "UserPromptSubmit", "session_id": "c1", "prompt": f"see {A.token}"})
    tap()
    tap()  # each receipt once
    (run,) = harness_runs(record)
    assert (run.pid, run.ready, run.accepted) == (41, True, [f"see {A.token}"])
    assert tap.prompts == [("c1", f"see {A.token}")]


def test_the_hook_tap_finds_a_folder_the_agents_environment_names(tmp_path: Path) -> None:
    root, record = tmp_path / "state" / "receipts", tmp_path / "harness.jsonl"
    folder = root / "github-sandbox-chaos-1" / "spawn-1"
    folder.mkdir(parents=True)
    hints = [value for _, value in channel(folder)]  # opencode's: its plugin in OPENCODE_CONFIG_CONTENT
    start = {"kind": "start", "pid": 42, "cwd": "/w/1", "argv": ["--prompt", "hello"], "env": hints}
    record.write_text(json.dumps(start) + "\n", encoding="utf-8")
    tap = HookTap(record, root)
    receipt(folder, {"hook_event_name": "SessionStart", "session_id": "ses_1", "source": "startup"})
    tap()
    (run,) = harness_runs(record)
    assert (run.pid, run.ready) == (42, True)


def wrapped(record: Path, *argv: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    argv = (sys.executable, str(WRAPPER), str(record), *argv)
    return subprocess.Popen(argv, start_new_session=True, env={**os.environ, **(env or {})})


def test_the_wrapper_records_the_variables_that_hand_the_agent_its_hooks(tmp_path: Path) -> None:
    record = tmp_path / "harness.jsonl"
    env = {"THE_LOOP_RECEIPTS": "/r/item/spawn", "OPENCODE_TUI_CONFIG": "/r/item/spawn/tui.json", "OTHER": "x"}
    assert wrapped(record, "/bin/sh", "-c", "exit 0", env=env).wait(timeout=30) == 0
    (start,) = lines(record, "start")
    assert start["env"] == ["/r/item/spawn", "/r/item/spawn/tui.json"]


def lines(record: Path, kind: str) -> list[dict[str, Any]]:
    return [entry for entry in map(json.loads, record.read_text().splitlines()) if entry["kind"] == kind]


def wait_for_start(record: Path) -> int:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if record.exists() and (starts := lines(record, "start")):
            return int(starts[0]["pid"])
        time.sleep(0.02)
    raise AssertionError("the wrapper never recorded its agent's start")


def test_the_wrapper_records_an_agent_ending_by_itself_as_its_exit(tmp_path: Path) -> None:
    record = tmp_path / "harness.jsonl"
    assert wrapped(record, "/bin/sh", "-c", "exit 3").wait(timeout=30) == 3
    (run,) = harness_runs(record)
    assert (run.exited, run.signal) == (True, None)


def test_the_wrapper_records_a_killed_agent_and_a_hung_up_pane_as_signals_never_as_an_exit(
    tmp_path: Path,
) -> None:
    record = tmp_path / "killed.jsonl"
    wrapper = wrapped(record, "/bin/sleep", "60")
    agent = wait_for_start(record)
    assert running(agent, record)  # known by its environment: its argv does not name the record
    os.kill(agent, signal.SIGKILL)
    wrapper.wait(timeout=30)
    (run,) = harness_runs(record)
    assert (run.exited, run.signal) == (False, signal.SIGKILL)
    tally = Tally()
    count_deaths([run], alive=lambda pid: False, killed_pids={agent}, killed_servers=set(), tally=tally)
    assert tally.killed == []

    record = tmp_path / "hung-up.jsonl"
    wrapper = wrapped(record, "/bin/sleep", "60")
    wait_for_start(record)
    wrapper.send_signal(signal.SIGHUP)
    wrapper.wait(timeout=30)
    (run,) = harness_runs(record)
    assert (run.exited, run.signal) == (False, signal.SIGHUP)
    tally = Tally()
    count_deaths([run], alive=lambda pid: False, killed_pids=set(), killed_servers=set(), tally=tally)
    assert len(tally.killed) == 1  # nobody the campaign counts ended it: a live session killed


def test_a_second_agent_of_a_folder_names_the_first_still_running_as_its_peer(tmp_path: Path) -> None:
    record = tmp_path / "harness.jsonl"
    first = wrapped(record, "/bin/sleep", "60")
    pid = wait_for_start(record)
    second = wrapped(record, "/bin/sh", "-c", "exit 0")
    second.wait(timeout=30)
    runs: list[HarnessRun] = harness_runs(record)
    assert [run.peers for run in runs] == [(), (pid,)]
    os.kill(pid, signal.SIGKILL)
    first.wait(timeout=30)
