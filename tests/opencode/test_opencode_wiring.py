"""opencode wiring: the built-in profile, the receipt channel, and what the plugin writes
for each opencode event (the plugin run by Node with opencode's hook and event shapes)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from adapters.harnesses.opencode.plugin import (
    CONFIG_VARIABLE,
    NPM_RETRIES,
    PLUGIN_FILE,
    TUI_CONFIG_VARIABLE,
    TUI_PLUGIN_FILE,
    VALUES_FILE,
    receipt_channel,
    source,
    tui_source,
    values,
)
from adapters.receipts.files import FileReceipts
from app.config.harnesses import BUILTIN_HARNESSES
from app.config.settings import Settings
from domain.receipts import (
    HarnessState,
    Receipt,
    ReceiptKind,
    ReceiptMode,
    conversation_of,
    harness_state,
    turn_ended_after,
)
from domain.refs import RepoRef, WorkItemRef

ITEM = WorkItemRef(RepoRef.parse("acme/widgets"), 7)


def test_opencode_confirms_by_its_plugin_and_resumes_by_the_id_its_ready_receipt_named() -> None:
    harness = Settings.model_validate({}).harness_spec("opencode")
    assert (harness.receipts, harness.hooks) == (ReceiptMode.HOOKS, "opencode")
    assert harness.argv("S", resume=False) == ("opencode", "--prompt")
    assert harness.argv("ses_1", resume=True) == ("opencode", "--session", "ses_1", "--prompt")
    assert harness.names_its_conversations  # opencode names its sessions: learnt from the ready receipt
    # no folder trust to pre-seed; no start that ignores its folder's files: never started in a fork's folder
    assert not harness.trust_workdir and harness.unvouched_args is None
    assert BUILTIN_HARNESSES["opencode"].receipts == "opencode"


def test_an_opencode_spawn_gets_its_plugin_in_its_config_content_writing_into_its_receipt_folder(
    tmp_path: Path,
) -> None:
    receipts = FileReceipts(tmp_path, channels={"opencode": receipt_channel})
    channel = receipts.prepare(ITEM, "s1", mode=ReceiptMode.HOOKS, hooks="opencode")
    folder = receipts.folder(ITEM, "s1")
    env = dict(channel.env)
    assert (sorted(env), channel.args) == (sorted([CONFIG_VARIABLE, TUI_CONFIG_VARIABLE, NPM_RETRIES[0]]), ())
    assert json.loads(env[CONFIG_VARIABLE]) == {"plugin": [(folder / PLUGIN_FILE).as_uri()]}
    assert (folder / PLUGIN_FILE).read_text(encoding="utf-8") == source()
    tui = json.loads(Path(env[TUI_CONFIG_VARIABLE]).read_text(encoding="utf-8"))
    assert tui == {"plugin": [(folder / TUI_PLUGIN_FILE).as_uri()]} and (folder / TUI_PLUGIN_FILE).is_file()


DRIVER = """
import { writeFileSync } from "node:fs"
const { TheLoopReceipts } = await import(process.argv[2])
const hooks = await TheLoopReceipts({ client: {} })
const steps = JSON.parse(process.argv[3])
for (const [kind, a, b] of steps) {
  if (kind === "chat") await hooks["chat.message"]({ sessionID: a }, { parts: [{ type: "text", text: b }] })
  else if (kind === "shown") writeFileSync(`${process.argv[4]}/shown-${a}`, "")  // what the TUI plugin leaves
  else if (kind === "killed") process.exit(0)
  else if (kind === "wait") await new Promise((done) => setTimeout(done, a))  // the plugin looks every 25 ms
  else await hooks.event({ event: { type: kind, properties: a } })
}
"""


def node_binary() -> str:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("node is needed to run the opencode plugin (bootstrap installs it)")
        pytest.skip("SKIPPED LOUDLY: no node to run the opencode plugin")
    return node


def run_plugin(tmp_path: Path, steps: list[list[object]]) -> list[Receipt]:
    node = node_binary()
    receipts = FileReceipts(tmp_path, channels={"opencode": receipt_channel})
    receipts.prepare(ITEM, "s1", mode=ReceiptMode.HOOKS, hooks="opencode")
    plugin = receipts.folder(ITEM, "s1") / PLUGIN_FILE
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER, encoding="utf-8")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    folder = str(receipts.folder(ITEM, "s1"))
    subprocess.run([node, str(driver), plugin.as_uri(), json.dumps(steps), folder], check=True, timeout=60, env=env)
    return list(receipts.read(ITEM, "s1"))


def test_the_plugin_maps_opencodes_events_to_the_receipts_of_claude_codes_hooks(tmp_path: Path) -> None:
    main, child = {"id": "ses_main"}, {"id": "ses_child", "parentID": "ses_main"}
    read = run_plugin(
        tmp_path,
        [
            ["session.created", {"sessionID": "ses_main", "info": main}],
            ["chat", "ses_main", "first\nDelivery: d1 (receipt t1)"],
            ["shown", "ses_main"],
            ["wait", 200],
            ["session.created", {"sessionID": "ses_child", "info": child}],
            ["chat", "ses_child", "a subagent's prompt"],
            ["session.idle", {"sessionID": "ses_child"}],
            ["chat", "ses_main", "queued while busy"],
            ["permission.asked", {"id": "per_1", "sessionID": "ses_main", "permission": "bash"}],
            ["permission.replied", {"sessionID": "ses_main", "requestID": "per_1", "reply": "once"}],
            ["session.idle", {"sessionID": "ses_main"}],
            ["chat", "ses_main", "fails"],
            [
                "session.error",
                {
                    "sessionID": "ses_main",
                    "error": {"name": "APIError", "data": {"message": "slow down", "statusCode": 429}},
                },
            ],
            ["session.idle", {"sessionID": "ses_main"}],
        ],
    )
    kinds = [r.kind for r in read]
    assert kinds == [
        ReceiptKind.PROMPT,  # at once: the ready receipt waits for the TUI to show the session
        ReceiptKind.READY,
        ReceiptKind.PROMPT,
        ReceiptKind.BLOCKED,
        ReceiptKind.WORKING,
        ReceiptKind.TURN_ENDED,
        ReceiptKind.TURN_ENDED,
        ReceiptKind.PROMPT,
        ReceiptKind.TURN_FAILED,
    ]
    assert read[1].conversation == "ses_main" and read[1].source == "startup"
    failed = read[-1]
    assert (failed.detail, failed.message) == ("rate_limit", "slow down")
    # the subagent's prompt is not the-loop's; the queued one's turn ended with the idle
    assert turn_ended_after(read, "queued while busy")
    assert harness_state(read[:4]) is HarnessState.BLOCKED
    assert harness_state(read) is HarnessState.IDLE


def test_a_prompt_taken_before_the_tui_shows_the_session_is_said_at_once_and_the_harness_is_starting(
    tmp_path: Path,
) -> None:
    """bench.chaos --harness opencode: killed while its ready receipt waited for the TUI, opencode
    had taken the prompt, and the retry gave it again (7 of 833 comments). The prompt's receipt is
    not held; the ready receipt is, so nothing is pasted before the TUI shows the session."""
    main = {"id": "ses_main"}
    read = run_plugin(
        tmp_path,
        [
            ["session.created", {"sessionID": "ses_main", "info": main}],
            ["chat", "ses_main", "first\nDelivery: d1 (receipt t1)"],
            ["killed"],  # before the TUI showed the session
        ],
    )
    assert [r.kind for r in read] == [ReceiptKind.PROMPT]
    assert harness_state(read) is HarnessState.STARTING
    assert conversation_of(read) == "ses_main"  # a resume continues the conversation that took it


# The TUI's side, with the parts of opencode's TUI plugin API it reads: the route, and the renderer
# (OpenTUI's): the renderable that has the keyboard, and its `focused_renderable` event. A paste
# goes to the focused renderable only; with none, OpenTUI drops it.
TUI_DRIVER = """
import { readdirSync } from "node:fs"
import { EventEmitter } from "node:events"
const plugin = (await import(process.argv[2])).default
const [steps, folder] = [JSON.parse(process.argv[3]), process.argv[4]]
const renderer = Object.assign(new EventEmitter(), { currentFocusedRenderable: null })
const api = { route: { current: { name: "home" } }, renderer, lifecycle: { onDispose() {} } }
const inputs = {}
const focus = (input) => {
  const before = renderer.currentFocusedRenderable
  renderer.currentFocusedRenderable = input
  renderer.emit("focused_renderable", input, before)
}
const looks = {}
for (const [kind, a, b] of steps) {
  if (kind === "route") api.route.current = a ? { name: "session", params: { sessionID: a } } : { name: "home" }
  else if (kind === "input") inputs[a] = { traits: b ? { owner: "opencode", role: b } : {}, isDestroyed: false }
  else if (kind === "focus") focus(inputs[a])
  else if (kind === "blur") focus(null)
  else if (kind === "start") await plugin.tui(api)
  else if (kind === "wait") await new Promise((done) => setTimeout(done, a))
  else if (kind === "look") looks[a] = readdirSync(folder).filter((name) => name.startsWith("shown-")).sort()
}
console.log(JSON.stringify(looks))
process.exit(0)
"""


def run_tui_plugin(tmp_path: Path, steps: list[list[object]]) -> dict[str, list[str]]:
    node = node_binary()
    folder = tmp_path / "receipts"
    folder.mkdir()
    plugin = tmp_path / TUI_PLUGIN_FILE
    plugin.write_text(tui_source(), encoding="utf-8")
    (tmp_path / VALUES_FILE).write_text(values(folder), encoding="utf-8")
    driver = tmp_path / "tui-driver.mjs"
    driver.write_text(TUI_DRIVER, encoding="utf-8")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    done = subprocess.run(
        [node, str(driver), plugin.as_uri(), json.dumps(steps), str(folder)],
        check=True,
        timeout=60,
        env=env,
        capture_output=True,
        text=True,
    )
    looks: dict[str, list[str]] = json.loads(done.stdout)
    return looks


def test_the_tui_marks_a_session_shown_once_its_prompt_has_the_keyboard_not_when_its_route_changes(
    tmp_path: Path,
) -> None:
    """Under load the TUI took 1-3 s from switching to the session's route to mounting its prompt
    (a blank screen meanwhile); a paste made on the ready receipt in between reached no input and was
    lost (4 of 48 runs at load 25). The mark, which the ready receipt waits for, comes when the
    session's prompt has the keyboard."""
    looks = run_tui_plugin(
        tmp_path,
        [
            ["input", "home", "prompt"],
            ["start"],
            ["focus", "home"],
            ["wait", 100],
            ["route", "ses_main"],  # the TUI submitted --prompt from its home screen and switched
            ["wait", 400],
            ["look", "home prompt not yet let go"],
            ["blur"],
            ["wait", 400],
            ["look", "nothing has the keyboard"],
            ["input", "dialog", ""],
            ["focus", "dialog"],
            ["wait", 400],
            ["look", "a dialog's input"],
            ["input", "session", "prompt"],
            ["focus", "session"],
            ["wait", 400],
            ["look", "the session's prompt"],
        ],
    )
    assert looks == {
        "home prompt not yet let go": [],
        "nothing has the keyboard": [],
        "a dialog's input": [],
        "the session's prompt": ["shown-ses_main"],
    }


def test_a_tui_started_on_its_session_marks_it_shown_once_its_prompt_has_the_keyboard(tmp_path: Path) -> None:
    """A resume opens the session at once: its prompt may have the keyboard before the plugin runs."""
    looks = run_tui_plugin(
        tmp_path,
        [
            ["route", "ses_old"],
            ["input", "session", "prompt"],
            ["focus", "session"],
            ["start"],
            ["wait", 400],
            ["look", "started"],
        ],
    )
    assert looks == {"started": ["shown-ses_old"]}
