"""The shell line a harness's hook runs to leave a receipt, shared by every harness whose hooks
the-loop writes: Claude Code's settings (`adapters.harnesses.claude.hooks`), Codex's command-line hooks
(`adapters.harnesses.codex.hooks`) and Gemini CLI's extension (`adapters.harnesses.gemini.hooks`). The receipt folders
read what it writes (`adapters.receipts.reading`), and Claude Code's and Codex's PermissionRequest
hook (`asking_command`) takes the daemon's answer from the files beside its receipt.

Each hook is one tiny shell line, no interpreter start-up: it writes the JSON the harness gives it
on stdin to a file of its own and renames it into place, so a reader never sees half a receipt and
two hooks never interleave.
"""

from __future__ import annotations

import shlex
from pathlib import Path

SUFFIX = ".receipt"
FOLDER_VARIABLE = "THE_LOOP_RECEIPTS"  # where a harness that writes its own receipts puts them
# beside a PermissionRequest receipt `<key>.receipt`, the daemon writes `<key>.decision`
# (the hook's whole output); the hook takes it by renaming it `<key>.taken`, or, its wait over,
# leaves `<key>.expired` and the dialog to the pane
DECISION, TAKEN, EXPIRED = ".decision", ".taken", ".expired"
TICK_SECONDS = 0.2  # how often the asking hook looks for its decision


def hook_command(folder: Path) -> str:
    """`date +%s%N` orders the files; `$$` keeps two hooks of one nanosecond apart. It always exits
    0: Claude Code reads a hook's exit status 2 as "block" (the prompt erased, the tool denied), and
    sh exits 2 when it cannot create the file (the folder gone): a receipt lost, never a prompt."""
    return f"{record(folder)}; exit 0"


def env_hook_command(variable: str) -> str:
    """The same line writing into the folder `$variable` names, and doing nothing where it is unset
    (a hook installed once for every run of a harness, the-loop's spawns among them)."""
    return f'd="${variable}"; [ -n "$d" ] || exit 0; {_record_into(chr(34) + "$d" + chr(34))}; exit 0'


def record(folder: Path) -> str:
    """The line's writing part alone, for a hook that goes on after it (`asking_command`)."""
    return _record_into(shlex.quote(str(folder)))


def _record_into(where: str) -> str:
    return f'umask 077; f={where}/"$(date +%s%N)-$$"; cat > "$f.part" && mv -f "$f.part" "$f{SUFFIX}"'


def asking_command(folder: Path, wait_seconds: float) -> str:
    """The PermissionRequest hook: its receipt, then up to `wait_seconds` for the daemon's decision
    (an answer from the item), printed whole to the harness. Nothing printed leaves the dialog to
    the pane, as without the-loop. Claude Code draws the dialog while the hook waits, so someone
    attached can still answer it (tests/claude/test_loop_asks.py); Codex draws it only once the
    hook is over (tests/codex/test_codex_permission_facts.py)."""
    ticks = max(1, round(wait_seconds / TICK_SECONDS))
    wait = (
        f"n=0; while [ $n -lt {ticks} ]; do "
        f'if mv "$f{DECISION}" "$f{TAKEN}" 2>/dev/null; then cat "$f{TAKEN}"; exit 0; fi; '
        f"sleep {TICK_SECONDS}; n=$((n+1)); done; "
        f': > "$f{EXPIRED}"'
    )
    return f"{record(folder)} || exit 0; {wait}; exit 0"


def asking_timeout(wait_seconds: float) -> int:
    """The asking hook's own timeout, longer than its wait: a harness's default would cut it short."""
    return int(wait_seconds) + 30
