// the-loop's receipts for one opencode spawn (copied beside its values by adapters/opencode/plugin.py)
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs"

// what this spawn is told (its receipt folder) is data in the JSON file beside this one, never code
const { folder: FOLDER } = JSON.parse(readFileSync(new URL("the-loop-values.json", import.meta.url), "utf8"))
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
