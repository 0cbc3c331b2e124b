"""The tmux command lines the adapter sends, built as plain argv lists (no I/O)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from domain.refs import TmuxTarget

SEP = ";"  # a lone ';' argument separates commands inside one tmux invocation
DEAD_MARKER = "the-loop:pane-dead"
PANE_STATES = "#{pane_dead}"
PANE_PIDS = "#{pane_id} #{pane_dead} #{pane_pid}"
PANE_ID = "#{pane_id}"
_PANE_ID_RE = re.compile(r"%[0-9]+")

# Reads the prompt file, removes it, and execs the harness with the prompt as its last
# argument: the prompt travels by file and "$p" only, never through any shell parsing.
# The trailing x keeps the prompt's trailing newlines, which $(...) would strip.
SPAWN_WRAPPER = 'p=$(cat -- "$1" && printf x); rc=$?; rm -f -- "$1"; shift; [ "$rc" = 0 ] && exec "$@" "${p%x}"'


def literal(arg: str) -> str:
    """`arg` as tmux reads it from argv: a trailing ';' would otherwise end the command."""
    return arg[:-1] + "\\;" if arg.endswith(";") else arg


def pane(target: TmuxTarget) -> str:
    # '=' makes the session exact; the ':' makes it a session even where tmux expects a
    # window, which otherwise prefix-matches (`=loop-a` finds loop-ab on tmux 3.3)
    return f"{target.exact}:"


def is_pane_id(text: str) -> bool:
    """`text` is a tmux pane id (`%N`): nothing else may reach a tmux command string."""
    return _PANE_ID_RE.fullmatch(text) is not None


def destination(target: TmuxTarget, pane_id: str) -> str:
    """Where a paste goes: the harness's own pane, else the session's active pane."""
    return pane_id or pane(target)


def pane_dead_or_foreign(target: TmuxTarget, pane_id: str) -> str:
    """A format that is 1 unless `pane_id` is a live pane of `target`. It checks the id too:
    if-shell may not fail on a missing pane, it expands the format without one."""
    ours = f"#{{&&:#{{==:#{{pane_id}},{pane_id}}},#{{==:#{{session_name}},{target.name}}}}}"
    return f"#{{?{ours},{PANE_STATES},1}}"


def session_state(target: TmuxTarget) -> list[str]:
    return ["list-panes", "-s", "-t", pane(target), "-F", PANE_STATES]


def pane_pids(target: TmuxTarget) -> list[str]:
    return ["list-panes", "-s", "-t", pane(target), "-F", PANE_PIDS]


def new_session(
    target: TmuxTarget,
    *,
    cwd: str,
    env: Sequence[tuple[str, str]],
    prompt_file: str,
    argv: Sequence[str],
    remain_on_exit: bool,
) -> list[str]:
    # -P -F: tmux prints the harness's pane id, so deliveries never need the active pane
    args = ["new-session", "-d", "-P", "-F", PANE_ID, "-s", target.name, "-c", literal(cwd)]
    for key, value in env:
        args += ["-e", literal(f"{key}={value}")]
    wrapper = ["/bin/sh", "-c", SPAWN_WRAPPER, "the-loop-spawn", prompt_file, *argv]
    args += ["--", *(literal(a) for a in wrapper)]
    if remain_on_exit:
        # same invocation: tmux handles the pane's exit only after this command list ran,
        # so even a harness that exits at once leaves a dead pane
        args += [SEP, "set-option", "-t", pane(target), "remain-on-exit", "on"]
    return args


def load_buffers(prompt_buffer: str, submit_buffer: str) -> list[str]:
    """The prompt comes from stdin; the submit is a constant carriage return."""
    return ["load-buffer", "-b", prompt_buffer, "-", SEP, "set-buffer", "-b", submit_buffer, "\r"]


def guarded(target: TmuxTarget, buffers: Sequence[str], pastes: Sequence[str], *, pane_id: str = "") -> list[str]:
    """Run `pastes` only if the pane is alive (with `pane_id`: only if that pane is alive and
    still `target`'s), in the same command, so nothing changes between check and paste: pasting
    into a dead pane crashes the tmux 3.3 server. Otherwise deletes `buffers` and prints DEAD_MARKER."""
    dead = [*(f"delete-buffer -b {b}" for b in buffers), f"display-message -p {DEAD_MARKER}"]
    condition = pane_dead_or_foreign(target, pane_id) if pane_id else PANE_STATES
    where = destination(target, pane_id)
    return ["if-shell", "-F", "-t", where, condition, " ; ".join(dead), " ; ".join(pastes)]


def paste(target: TmuxTarget, buffer: str, *, bracketed: bool, pane_id: str = "") -> str:
    # no -r: a newline goes out as CR, as terminals paste it; -r (LF) would not stop a cooked
    # or readline program from running each line either, and the harness is not such a program
    flags = "-p -d" if bracketed else "-d"
    return f"paste-buffer {flags} -b {buffer} -t {destination(target, pane_id)}"


def delete_buffers(buffers: Sequence[str]) -> list[str]:
    """Delete `buffers` whether or not they exist (deleting a missing one is an error)."""
    args: list[str] = []
    for name in buffers:
        args += ["set-buffer", "-b", name, "x", SEP, "delete-buffer", "-b", name, SEP]
    return args[:-1]
