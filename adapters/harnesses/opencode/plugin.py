"""The plugin the-loop hands opencode for one spawn: it writes the receipt files `FileReceipts` reads.

opencode loads the plugins its configuration lists; `OPENCODE_CONFIG_CONTENT` (an environment
variable holding configuration JSON) is merged last, over the user's and the folder's own files, and
its `plugin` list is added to theirs. So the-loop writes this plugin into the spawn's receipt folder
and names it there: the user's configuration is never written, and their own plugins still load.
Both plugins are package files (`plugins/`) copied unchanged; the folder they write into is data,
in a JSON file beside them that they read (never text put into their code).

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
- `chat.message` (a prompt reached the session, a queued one too): `UserPromptSubmit` with its text,
  its message's id (`prompt_id`, and `turn_id`: a prompt runs in a turn of its own, a queued one too)
  and opencode's store (`transcript_path`), where `usage` reads its turn;
- `permission.asked`, with a wait for answers from the item: a `PermissionRequest` naming the tool
  and the arguments it was called with; the plugin waits for the daemon's decision beside it, as
  Claude Code's hook does (`adapters.agents.receipt_line`), and replies through opencode's own API
  (tests/opencode/test_opencode_permission_facts.py). Without a wait, and for `question.asked`: a
  `Notification` that blocks, answered in the pane. Their replies: `PostToolUse` (a permission's
  naming its request's tool and input, which answers it);
- `session.error`: `StopFailure` with the error's kind; `session.idle`: one `Stop` per prompt taken
  since the last idle, oldest first, each naming its prompt as its `UserPromptSubmit` did (opencode
  answers prompts queued while busy in one run, each under its own message, then idles once).
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

from adapters.files.atomic import write_whole
from domain.model import ReceiptChannel

PLUGIN_FILE = "the-loop-receipts.js"
TUI_PLUGIN_FILE = "the-loop-tui.js"
TUI_CONFIG_FILE = "tui.json"
VALUES_FILE = "the-loop-values.json"  # the name both plugins read beside themselves
CONFIG_VARIABLE = "OPENCODE_CONFIG_CONTENT"
TUI_CONFIG_VARIABLE = "OPENCODE_TUI_CONFIG"
# opencode installs @opencode-ai/plugin from npm into each configuration folder lacking node_modules,
# and loads no plugin (so says nothing) until that install ends; npm retries a refused request after
# 10 s and 60 s, so offline the install failed ~70 s later, at every start: one try fails at once
NPM_RETRIES = ("npm_config_fetch_retries", "0")


def source() -> str:
    """The plugin's JavaScript, as the package ships it."""
    return _shipped("receipts.js")


def tui_source() -> str:
    """The TUI plugin's JavaScript, as the package ships it: it marks each session the TUI shows."""
    return _shipped("tui.js")


def values(folder: Path, *, ask_wait_seconds: float = 0.0) -> str:
    """What both plugins are told, as the JSON they read beside themselves: the receipt folder, and
    how long a permission request waits there for an answer from the item (0: it is not asked)."""
    return json.dumps({"folder": str(folder), "askWaitSeconds": ask_wait_seconds})


def config(plugin: Path) -> str:
    """The configuration the-loop hands opencode: its plugin, nothing else."""
    return json.dumps({"plugin": [plugin.as_uri()]})


def channel(folder: Path, *, ask_wait_seconds: float = 0.0) -> tuple[tuple[str, str], ...]:
    """Both plugins written into `folder`, and the environment naming them (with npm's retries off)."""
    plugin, tui_plugin, tui_config = folder / PLUGIN_FILE, folder / TUI_PLUGIN_FILE, folder / TUI_CONFIG_FILE
    _write(folder / VALUES_FILE, values(folder, ask_wait_seconds=ask_wait_seconds))
    _write(plugin, source())
    _write(tui_plugin, tui_source())
    _write(tui_config, json.dumps({"plugin": [tui_plugin.as_uri()]}))
    return ((CONFIG_VARIABLE, config(plugin)), (TUI_CONFIG_VARIABLE, str(tui_config)), NPM_RETRIES)


def receipt_channel(folder: Path, *, ask_wait_seconds: float = 0.0) -> ReceiptChannel:
    """What an opencode spawn is handed so its receipts reach `folder`: both plugins, in its
    environment. `ask_wait_seconds`: how long the plugin waits for the answer to a permission request."""
    return ReceiptChannel(env=channel(folder, ask_wait_seconds=ask_wait_seconds))


def _shipped(name: str) -> str:
    return files("adapters.harnesses.opencode").joinpath("plugins", name).read_text(encoding="utf-8")


def _write(path: Path, text: str) -> None:
    write_whole(path, text, mode=0o666, fsync=False)
