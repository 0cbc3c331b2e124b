// the-loop's receipts for one opencode spawn (copied beside its values by adapters/opencode/plugin.py)
import { existsSync, readdirSync, readFileSync, readlinkSync, renameSync, writeFileSync } from "node:fs"

// what this spawn is told (its receipt folder, how long a permission request waits for an answer
// from the item) is data in the JSON file beside this one, never code
const VALUES = JSON.parse(readFileSync(new URL("the-loop-values.json", import.meta.url), "utf8"))
const FOLDER = VALUES.folder
const ASK_WAIT_MS = Number(VALUES.askWaitSeconds ?? 0) * 1000
const HOLD_MS = 30000
// beside a request's receipt `<key>.receipt` the daemon writes `<key>.decision`; the plugin takes it
// by renaming it `<key>.taken`, or, its wait over, leaves `<key>.expired` (adapters/agents/receipt_line.py)
const DECISION = ".decision"
const TAKEN = ".taken"
const EXPIRED = ".expired"
const TICK_MS = 200
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

// the receipt's key (its file's name), "" when it could not be written
function write(receipt) {
  try {
    const name = `${BigInt(Date.now()) * 1000000n + BigInt(sequence++ % 1000000)}-${process.pid}`
    writeFileSync(`${FOLDER}/${name}.part`, JSON.stringify(receipt), { mode: 0o600 })
    renameSync(`${FOLDER}/${name}.part`, `${FOLDER}/${name}.receipt`)
    return name
  } catch {
    return ""
  }
}

function touch(path) {
  try {
    writeFileSync(path, "", { mode: 0o600 })
  } catch {}
}

// the decision the daemon wrote (Claude Code's PermissionRequest hook output) as opencode's reply:
// an allow adding a rule for the session is opencode's "always"; null for what is neither
function reply(text) {
  let decision
  try {
    decision = JSON.parse(text)?.hookSpecificOutput?.decision
  } catch {
    return null
  }
  if (decision?.behavior === "deny") return { reply: "reject", message: String(decision.message ?? "") }
  if (decision?.behavior !== "allow") return null
  return { reply: (decision.updatedPermissions ?? []).length > 0 ? "always" : "once" }
}

// a request's decision, taken from beside its receipt within the wait, handed to `answer`; none
// taken leaves `.expired` and the dialog, drawn by opencode all along, to the pane
function awaitDecision(key, answer) {
  const since = Date.now()
  const timer = setInterval(() => {
    const file = `${FOLDER}/${key}`
    try {
      renameSync(file + DECISION, file + TAKEN)
      clearInterval(timer)
      answer(readFileSync(file + TAKEN, "utf8"))
      return
    } catch {}
    if (Date.now() - since < ASK_WAIT_MS) return
    clearInterval(timer)
    touch(file + EXPIRED)
  }, TICK_MS)
  return () => clearInterval(timer)
}

// the TUI runs this plugin in a worker whose argv is its own: the command line is its parent's
function commandLine() {
  try {
    const pid = process.env.OPENCODE_PID
    if (pid) return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")
  } catch {}
  return process.argv
}

// opencode's own store, where each message is recorded with what its request cost (what `opencode db
// path` prints): the one database file the process holds open; "" when it holds not exactly one
function openStore() {
  try {
    const fds = `/proc/${process.env.OPENCODE_PID || "self"}/fd`
    const open = new Set()
    for (const fd of readdirSync(fds)) {
      try {
        const path = readlinkSync(`${fds}/${fd}`)
        if (path.endsWith(".db")) open.add(path)
      } catch {}
    }
    return open.size === 1 ? [...open][0] : ""
  } catch {
    return ""
  }
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
  const calls = new Map() // callID → the tool and its arguments, as the tool was called
  const asked = new Map() // a permission request's id → its receipt's fields, and how to stop its wait
  const taken = [] // the messages of the prompts taken since the last idle, oldest first
  let store = ""
  // where a turn's usage is read: its prompt's message, in opencode's store (found once it is open).
  // A prompt runs in a turn of its own, a queued one too (answered under its own message): the
  // message's id names that turn (`turn_id`) in its prompt's receipt and in its Stop alike
  const turnOf = (id) => {
    store ||= openStore()
    return { prompt_id: id ?? "", turn_id: id ?? "", transcript_path: store }
  }

  // opencode's own reply endpoint takes the reply and, for a reject, the message the model reads;
  // the client plugins are given has no method for it (its older `postSessionIdPermissionsPermissionId`
  // takes no message), so it is posted through that client's own transport, with its directory header
  const answer = (id, text) => {
    const body = reply(text)
    if (!body) return
    const path = { requestID: id }
    const headers = { "Content-Type": "application/json" }
    client._client.post({ url: "/permission/{requestID}/reply", path, body, headers }).catch(() => {})
  }

  // a request answerable from the item: the tool, its arguments (the model's why among them) and
  // the session, as Claude Code's PermissionRequest hook gives them
  const request = (p) => {
    const call = calls.get(p.tool?.callID)
    const fields = {
      session_id: p.sessionID,
      tool_name: call?.tool ?? String(p.permission ?? ""),
      tool_input: call?.args ?? p.metadata ?? {},
    }
    const key = write({ hook_event_name: "PermissionRequest", ...fields })
    if (!key) return
    asked.set(p.id, { fields, stop: awaitDecision(key, (text) => answer(p.id, text)) })
  }
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
    // before the tool asks: its arguments, which the permission request does not carry whole
    "tool.execute.before": async (input, output) => {
      if (input?.callID) calls.set(input.callID, { tool: input.tool, args: output?.args ?? {} })
    },
    "tool.execute.after": async (input) => {
      calls.delete(input?.callID)
    },
    "chat.message": async (input, output) => {
      if (children.has(input.sessionID)) return
      taken.push(output?.message?.id ?? input.messageID)
      const text = (output?.parts ?? []).filter((p) => p.type === "text").map((p) => p.text).join("\n")
      write({ hook_event_name: "UserPromptSubmit", session_id: input.sessionID, prompt: text, ...turnOf(taken.at(-1)) })
    },
    event: async ({ event }) => {
      const p = event.properties ?? {}
      switch (event.type) {
        case "session.created":
          if (p.info?.parentID) children.add(p.info.id)
          else readyWhenShown({ hook_event_name: "SessionStart", source: "startup", session_id: p.info?.id ?? "" })
          break
        case "permission.asked":
          if (ASK_WAIT_MS > 0) request(p)
          else
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
        case "permission.replied": {
          // answered (from the item or in the pane): its run names the request's tool and input
          const found = asked.get(p.requestID)
          asked.delete(p.requestID)
          found?.stop()
          write({ hook_event_name: "PostToolUse", session_id: p.sessionID, ...found?.fields })
          break
        }
        case "question.replied":
        case "question.rejected":
          write({ hook_event_name: "PostToolUse", session_id: p.sessionID })
          break
        case "session.error":
          if (p.sessionID && children.has(p.sessionID)) break
          if (p.error?.name === "MessageAbortedError") break
          write({
            hook_event_name: "StopFailure",
            session_id: p.sessionID ?? "",
            ...turnOf(taken.shift()),
            error: kind(p.error),
            last_assistant_message: String(p.error?.data?.message ?? p.error?.name ?? ""),
          })
          break
        case "session.idle":
          if (children.has(p.sessionID)) break
          // opencode answers each prompt under its own message, the newest taken at each request
          while (taken.length > 0) write({ hook_event_name: "Stop", session_id: p.sessionID, ...turnOf(taken.shift()) })
          break
      }
    },
  }
}
