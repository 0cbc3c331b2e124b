"""The plugin the-loop hands opencode for one spawn: it writes the receipt files `FileReceipts` reads.

opencode loads the plugins its configuration lists; `OPENCODE_CONFIG_CONTENT` (an environment
variable holding configuration JSON) is merged last, over the user's and the folder's own files, and
its `plugin` list is added to theirs. So the-loop writes this plugin into the spawn's receipt folder
and names it there: the user's configuration is never written, and their own plugins still load.

A second plugin, for the TUI (named in `OPENCODE_TUI_CONFIG`, a `tui.json` in the same folder),
marks each session the TUI shows, once its prompt has the keyboard (a paste that comes while nothing
has it is dropped); the first plugin holds a new or resumed session's *ready* receipt until then:
the TUI submits its first prompt from its home screen, and a paste that arrives before it shows the
session lands there and starts a second session (tests/opencode/test_opencode_facts.py).
Every other receipt is written at once: a prompt the session took is said however soon opencode is
killed after (bench.chaos --harness opencode: held with the ready receipt, such a prompt was given
again by the retry), and until its ready receipt the-loop counts the harness as starting.

The plugin writes receipts as Claude Code's hooks do (one JSON file each, renamed into place, named
by the time it was written) with the same fields, so `receipt_of` reads them unchanged:

- a new top-level session (`session.created`, no `parentID`): `SessionStart`, source `startup`;
- started with `--session ID` (a resume): `SessionStart`, source `resume`, once the session is found.
  The TUI drops `--prompt` on a resume (tests/opencode/test_opencode_facts.py), so the plugin
  submits the prompt it was given on the command line itself, through opencode's own API;
- `chat.message` (a prompt reached the session, a queued one too): `UserPromptSubmit` with its text;
- `permission.asked` / `question.asked`: a `Notification` that blocks; their replies: `PostToolUse`;
- `session.error`: `StopFailure` with the error's kind; `session.idle`: one `Stop` per prompt taken
  since the last idle (opencode answers prompts queued while busy in one run, then idles once).
"""

from __future__ import annotations

import json
from pathlib import Path

from adapters.files.atomic import write_whole
from domain.model import ReceiptChannel

PLUGIN_FILE = "the-loop-receipts.js"
TUI_PLUGIN_FILE = "the-loop-tui.js"
TUI_CONFIG_FILE = "tui.json"
CONFIG_VARIABLE = "OPENCODE_CONFIG_CONTENT"
TUI_CONFIG_VARIABLE = "OPENCODE_TUI_CONFIG"

_SOURCE = r"""// the-loop's receipts for one opencode spawn (written by the-loop: adapters/opencode/plugin.py)
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs"

const FOLDER = __FOLDER__
const HOLD_MS = 30000
let sequence = 0

// a session is ready once the TUI shows it (its TUI plugin leaves `shown-<id>`): a paste before that
// lands on the home screen, which starts another session with it. Only this receipt waits.
function readyWhenShown(receipt) {
  const since = Date.now()
  const timer = setInterval(() => {
    if (!existsSync(`${FOLDER}/shown-${receipt.session_id}`) && Date.now() - since < HOLD_MS) return
    clearInterval(timer)
    write(receipt)
  }, 25)
}

function write(receipt) {
  try {
    const name = `${BigInt(Date.now()) * 1000000n + BigInt(sequence++ % 1000000)}-${process.pid}`
    writeFileSync(`${FOLDER}/${name}.part`, JSON.stringify(receipt), { mode: 0o600 })
    renameSync(`${FOLDER}/${name}.part`, `${FOLDER}/${name}.receipt`)
  } catch {}
}

// the TUI runs this plugin in a worker whose argv is its own: the command line is its parent's
function commandLine() {
  try {
    const pid = process.env.OPENCODE_PID
    if (pid) return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")
  } catch {}
  return process.argv
}

function option(names) {
  const argv = commandLine()
  for (let i = 0; i < argv.length; i++) {
    for (const name of names) {
      if (argv[i] === name && i + 1 < argv.length) return argv[i + 1]
      if (argv[i].startsWith(name + "=")) return argv[i].slice(name.length + 1)
    }
  }
  return ""
}

// the causes domain/parking.py's ParkCause reads, by its values (tests/unit/test_parking.py keeps them equal)
function kind(error) {
  const status = Number(error?.data?.statusCode ?? 0)
  if (status === 429) return "rate_limit"
  if (status === 401 || status === 403 || error?.name === "ProviderAuthError") return "authentication_failed"
  if (status >= 500) return "server_error"
  return "unknown"
}

export const TheLoopReceipts = async ({ client }) => {
  const children = new Set()
  let open = 0
  const resumed = option(["--session", "-s"])
  if (resumed) {
    const prompt = option(["--prompt"])
    setTimeout(async () => {
      try {
        const found = await client.session.get({ path: { id: resumed } })
        if (!found?.data?.id) return
        readyWhenShown({ hook_event_name: "SessionStart", source: "resume", session_id: resumed })
        const parts = [{ type: "text", text: prompt }]
        if (prompt) client.session.prompt({ path: { id: resumed }, body: { parts } }).catch(() => {})
      } catch {}
    }, 0)
  }
  return {
    "chat.message": async (input, output) => {
      if (children.has(input.sessionID)) return
      open += 1
      const text = (output?.parts ?? []).filter((p) => p.type === "text").map((p) => p.text).join("\n")
      write({ hook_event_name: "UserPromptSubmit", session_id: input.sessionID, prompt: text })
    },
    event: async ({ event }) => {
      const p = event.properties ?? {}
      switch (event.type) {
        case "session.created":
          if (p.info?.parentID) children.add(p.info.id)
          else readyWhenShown({ hook_event_name: "SessionStart", source: "startup", session_id: p.info?.id ?? "" })
          break
        case "permission.asked":
          write({
            hook_event_name: "Notification",
            notification_type: "permission_prompt",
            session_id: p.sessionID,
            message: String(p.permission ?? ""),
          })
          break
        case "question.asked":
          write({ hook_event_name: "Notification", notification_type: "elicitation_dialog", session_id: p.sessionID })
          break
        case "permission.replied":
        case "question.replied":
        case "question.rejected":
          write({ hook_event_name: "PostToolUse", session_id: p.sessionID })
          break
        case "session.error":
          if (p.sessionID && children.has(p.sessionID)) break
          if (p.error?.name === "MessageAbortedError") break
          open = Math.max(0, open - 1)
          write({
            hook_event_name: "StopFailure",
            session_id: p.sessionID ?? "",
            error: kind(p.error),
            last_assistant_message: String(p.error?.data?.message ?? p.error?.name ?? ""),
          })
          break
        case "session.idle":
          if (children.has(p.sessionID)) break
          for (; open > 0; open--) write({ hook_event_name: "Stop", session_id: p.sessionID })
          break
      }
    },
  }
}
"""


_TUI_SOURCE = r"""// the-loop's TUI side for one opencode spawn (written by the-loop: adapters/opencode/plugin.py)
import { writeFileSync } from "node:fs"

const FOLDER = __FOLDER__

// A session is shown once its prompt has the keyboard: the renderer (OpenTUI's) hands a paste to the
// focused renderable only, and drops it while none is. The route changes first, and under load the
// session's view took 1-3 s more to mount its prompt (a blank screen meanwhile).
export default {
  id: "the-loop-receipts",
  tui: async (api) => {
    const said = new Set()
    const renderer = api.renderer
    const routed = () => {
      const route = api.route?.current
      return route?.name === "session" ? route.params?.sessionID ?? "" : ""
    }
    // the session routed to when each input first had the keyboard: the home screen's prompt, still
    // focused for a moment after the switch, is not the session's
    const focusedOn = new WeakMap()
    const look = () => {
      const input = renderer?.currentFocusedRenderable
      if (!input || input.isDestroyed) return
      if (!focusedOn.has(input)) focusedOn.set(input, routed())
      const session = focusedOn.get(input)
      if (!session || session !== routed() || said.has(session) || input.traits?.role !== "prompt") return
      said.add(session)
      try {
        writeFileSync(`${FOLDER}/shown-${session}`, "", { mode: 0o600 })
      } catch {}
    }
    renderer?.on?.("focused_renderable", look)
    const timer = setInterval(look, 25)
    api.lifecycle?.onDispose?.(() => {
      clearInterval(timer)
      renderer?.off?.("focused_renderable", look)
    })
  },
}
"""


def source(folder: Path) -> str:
    """The plugin's JavaScript, writing into `folder`."""
    return _SOURCE.replace("__FOLDER__", json.dumps(str(folder)))


def tui_source(folder: Path) -> str:
    """The TUI plugin's JavaScript: it marks each session the TUI shows in `folder`."""
    return _TUI_SOURCE.replace("__FOLDER__", json.dumps(str(folder)))


def config(plugin: Path) -> str:
    """The configuration the-loop hands opencode: its plugin, nothing else."""
    return json.dumps({"plugin": [plugin.as_uri()]})


def channel(folder: Path) -> tuple[tuple[str, str], ...]:
    """Both plugins written into `folder`, and the environment naming them."""
    plugin, tui_plugin, tui_config = folder / PLUGIN_FILE, folder / TUI_PLUGIN_FILE, folder / TUI_CONFIG_FILE
    _write(plugin, source(folder))
    _write(tui_plugin, tui_source(folder))
    _write(tui_config, json.dumps({"plugin": [tui_plugin.as_uri()]}))
    return ((CONFIG_VARIABLE, config(plugin)), (TUI_CONFIG_VARIABLE, str(tui_config)))


def receipt_channel(folder: Path) -> ReceiptChannel:
    """What an opencode spawn is handed so its receipts reach `folder`: both plugins, in its environment."""
    return ReceiptChannel(env=channel(folder))


def _write(path: Path, text: str) -> None:
    write_whole(path, text, mode=0o666, fsync=False)
