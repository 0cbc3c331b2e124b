"""opencode's permission requests answered from the item, wired: the plugin (run by Node with
opencode's hook and event shapes, a client that records what it is sent) writes a request's
receipt, takes the daemon's decision from beside it and replies through opencode's API."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from adapters.agents.receipt_line import EXPIRED, TAKEN
from adapters.harnesses.opencode.plugin import PLUGIN_FILE
from adapters.receipts.files import FileReceipts
from app.container import receipt_channels
from domain.asks import Answer, AnswerVerb, Ask, decision_for
from domain.receipts import Receipt, ReceiptKind, ReceiptMode, open_requests, parsed_input
from domain.refs import RepoRef, WorkItemRef
from tests.opencode.test_opencode_wiring import node_binary

ITEM = WorkItemRef(RepoRef.parse("acme/widgets"), 7)
ARGS = {"command": "touch made.txt", "description": "Makes the file"}
REPLY_URL = "/permission/{requestID}/reply"

DRIVER = """
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
const [plugin, stepsText, folder] = process.argv.slice(2)
const posts = []
const client = { _client: { post: async (request) => { posts.push(request); return {} } } }
const { TheLoopReceipts } = await import(plugin)
const hooks = await TheLoopReceipts({ client })
for (const [kind, a, b] of JSON.parse(stepsText)) {
  if (kind === "before") await hooks["tool.execute.before"]({ ...a, sessionID: "ses_main" }, { args: b })
  else if (kind === "wait") await new Promise((done) => setTimeout(done, a))
  else if (kind === "decide") {  // what the daemon writes beside the newest request's receipt
    const asked = readdirSync(folder).filter((n) => n.endsWith(".receipt")).sort()
      .filter((n) => JSON.parse(readFileSync(`${folder}/${n}`, "utf8")).hook_event_name === "PermissionRequest")
    writeFileSync(`${folder}/${asked.at(-1).replace(/\\.receipt$/, ".decision")}`, a)
  } else await hooks.event({ event: { type: kind, properties: a } })
}
console.log(JSON.stringify(posts))
process.exit(0)
"""

ASKED = {
    "id": "per_1",
    "sessionID": "ses_main",
    "permission": "bash",
    "patterns": ["touch made.txt"],
    "always": ["touch *"],
    "metadata": {"command": "touch made.txt"},
    "tool": {"messageID": "msg_1", "callID": "call_1"},
}
REPLIED = {"sessionID": "ses_main", "requestID": "per_1", "reply": "once"}


def run_asking_plugin(
    tmp_path: Path, steps: list[list[object]], *, wait: float
) -> tuple[list[Receipt], list[dict[str, Any]], Path]:
    """The plugin of a spawn the container's channels prepare, `wait` s for an answer: its receipts,
    what it posted to opencode, its folder."""
    receipts = FileReceipts(tmp_path, channels=receipt_channels(ask_wait_seconds=wait))
    receipts.prepare(ITEM, "s1", mode=ReceiptMode.HOOKS, hooks="opencode")
    folder = receipts.folder(ITEM, "s1")
    driver = tmp_path / "asks-driver.mjs"
    driver.write_text(DRIVER, encoding="utf-8")
    argv = [node_binary(), str(driver), (folder / PLUGIN_FILE).as_uri(), json.dumps(steps), str(folder)]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    done = subprocess.run(argv, check=True, timeout=60, env=env, capture_output=True, text=True)
    return list(receipts.read(ITEM, "s1")), json.loads(done.stdout), folder


def _decision(verb: AnswerVerb, text: str = "") -> str:
    ask = Ask("k", "bash", ARGS, session_rules=True)
    decision = decision_for(ask, Answer(verb, text), item=ITEM).choice
    assert decision is not None
    return decision


@pytest.mark.parametrize(
    ("verb", "text", "body"),
    [
        (AnswerVerb.ALLOW, "", {"reply": "once"}),
        (AnswerVerb.ALLOW_ALWAYS, "", {"reply": "always"}),
        (
            AnswerVerb.DENY,
            "not here",
            {"reply": "reject", "message": f"A person answering on {ITEM} denied this. Their reason: not here"},
        ),
    ],
)
def test_a_permission_request_names_the_tool_and_its_arguments_and_the_decision_is_opencodes_reply(
    tmp_path: Path, verb: AnswerVerb, text: str, body: dict[str, str]
) -> None:
    steps: list[list[object]] = [
        ["before", {"tool": "bash", "callID": "call_1"}, ARGS],
        ["permission.asked", ASKED],
        ["decide", _decision(verb, text)],
        ["wait", 600],
        ["permission.replied", REPLIED],
    ]
    read, posts, folder = run_asking_plugin(tmp_path, steps, wait=60)
    asked, ran = read
    assert (asked.kind, asked.tool, parsed_input(asked.tool_input)) == (ReceiptKind.BLOCKED, "bash", ARGS)
    assert (ran.kind, ran.tool, ran.tool_input) == (ReceiptKind.WORKING, asked.tool, asked.tool_input)
    assert open_requests(read[:1]) == [asked] and open_requests(read) == []  # its reply answers it
    assert posts == [
        {
            "url": REPLY_URL,
            "path": {"requestID": "per_1"},
            "body": body,
            "headers": {"Content-Type": "application/json"},
        }
    ]
    assert (folder / f"{asked.key}{TAKEN}").exists() and not (folder / f"{asked.key}{EXPIRED}").exists()


def test_no_decision_within_the_wait_leaves_the_request_expired_and_sends_no_reply(tmp_path: Path) -> None:
    steps: list[list[object]] = [["before", {"tool": "bash", "callID": "call_1"}, ARGS], ["permission.asked", ASKED]]
    read, posts, folder = run_asking_plugin(tmp_path, [*steps, ["wait", 900]], wait=0.3)
    (asked,) = read
    assert (folder / f"{asked.key}{EXPIRED}").exists() and posts == []


def test_a_request_answered_in_the_pane_stops_the_wait_and_its_reply_answers_it(tmp_path: Path) -> None:
    steps: list[list[object]] = [
        ["before", {"tool": "bash", "callID": "call_1"}, ARGS],
        ["permission.asked", ASKED],
        ["permission.replied", REPLIED],
        ["decide", _decision(AnswerVerb.ALLOW)],
        ["wait", 600],
    ]
    read, posts, folder = run_asking_plugin(tmp_path, steps, wait=60)
    assert open_requests(read) == [] and posts == []
    assert not (folder / f"{read[0].key}{TAKEN}").exists()


def test_a_request_of_a_tool_the_plugin_saw_no_call_of_names_the_permission_and_its_metadata(tmp_path: Path) -> None:
    read, _, _ = run_asking_plugin(tmp_path, [["permission.asked", ASKED]], wait=0.2)
    (asked,) = read
    assert (asked.tool, parsed_input(asked.tool_input)) == ("bash", {"command": "touch made.txt"})
