// the-loop's TUI side for one opencode spawn (copied beside its values by adapters/opencode/plugin.py)
import { readFileSync, writeFileSync } from "node:fs"

// what this spawn is told (its receipt folder) is data in the JSON file beside this one, never code
const { folder: FOLDER } = JSON.parse(readFileSync(new URL("the-loop-values.json", import.meta.url), "utf8"))

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
