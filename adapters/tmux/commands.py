"""The tmux command lines the adapter sends, built as plain argv lists (no I/O)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from domain.refs import TmuxTarget

SEP = ";"  # a lone ';' argument separates commands inside one tmux invocation
DEAD_MARKER = "the-loop:pane-dead"
MARK_OPTION = "@the-loop-harness"  # a pane option: the spawn id of the harness running in that pane
ROOT_OPTION = "@the-loop-root"  # a pane option: the mark of the state root whose daemon started that harness
PANE_STATES = "#{pane_dead}"
PANES = f"#{{pane_id}} #{{pane_dead}} #{{pane_pid}} #{{{MARK_OPTION}}}"
PANE_ID = "#{pane_id}"
_PANE_ID_RE = re.compile(r"%[0-9]+")
_MARK_RE = re.compile(r"[0-9a-f]{0,32}")

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


def is_mark(text: str) -> bool:
    """`text` can be a harness mark (hex, or empty for a pane recorded before marks existed)."""
    return _MARK_RE.fullmatch(text) is not None


def window_name(mark: str) -> str:
    """The name of a window the-loop opens for a harness inside an existing session."""
    return f"the-loop-{mark}"


def harness_pane_dead_or_foreign(target: TmuxTarget, pane_id: str, mark: str) -> str:
    """A format that is 1 unless `pane_id` is a live pane of `target` carrying `mark`. It checks
    the id too: if-shell may not fail on a missing pane, it expands the format without one."""
    same = f"#{{&&:#{{==:#{{pane_id}},{pane_id}}},#{{==:#{{session_name}},{target.name}}}}}"
    ours = f"#{{&&:{same},#{{==:#{{{MARK_OPTION}}},{mark}}}}}"
    return f"#{{?{ours},{PANE_STATES},1}}"


def session_state(target: TmuxTarget) -> list[str]:
    return ["list-panes", "-s", "-t", pane(target), "-F", PANE_STATES]


def panes(target: TmuxTarget) -> list[str]:
    return ["list-panes", "-s", "-t", pane(target), "-F", PANES]


def clients(target: TmuxTarget) -> list[str]:
    # list-clients names a missing session (display-message prints nothing for it)
    return ["list-clients", "-t", target.exact, "-F", "#{client_name}"]


def _wrapper(prompt_file: str, argv: Sequence[str]) -> list[str]:
    return ["--", *(literal(a) for a in ["/bin/sh", "-c", SPAWN_WRAPPER, "the-loop-spawn", prompt_file, *argv])]


def _env(env: Sequence[tuple[str, str]]) -> list[str]:
    args: list[str] = []
    for key, value in env:
        args += ["-e", literal(f"{key}={value}")]
    return args


def spawn(
    target: TmuxTarget,
    *,
    cwd: str,
    env: Sequence[tuple[str, str]],
    prompt_file: str,
    argv: Sequence[str],
    remain_on_exit: bool,
    mark: str,
    window: bool,
    root: str = "",
) -> list[str]:
    """The harness in a new session, or (`window`) in a new window of the existing one, where an
    operator's window lives: -d keeps that window current, so the new one is addressed by its own
    unique name. -P -F: tmux prints the harness's pane id, so deliveries never need the active
    pane; the mark (and `root`, the state root's mark) is set in the same invocation, while the new
    pane is the only one so named."""
    start = ["-c", literal(cwd), *_env(env), *_wrapper(prompt_file, argv)]
    if window:
        where, scope = f"{pane(target)}={window_name(mark)}", ["-w"]
        args = ["new-window", "-d", "-P", "-F", PANE_ID, "-n", window_name(mark), "-t", pane(target), *start]
    else:
        where, scope = pane(target), []
        args = ["new-session", "-d", "-P", "-F", PANE_ID, "-s", target.name, *start]
    args += [SEP, "set-option", "-p", "-t", where, MARK_OPTION, mark]
    if root:
        args += [SEP, "set-option", "-p", "-t", where, ROOT_OPTION, root]
    if remain_on_exit:
        # same invocation: tmux handles the pane's exit only after this command list ran,
        # so even a harness that exits at once leaves a dead pane
        args += [SEP, "set-option", *scope, "-t", where, "remain-on-exit", "on"]
    return args


def kill_dead_panes(pane_ids: Sequence[str]) -> list[str]:
    """Kill each pane only if it is still dead, in the same command: a pane that came alive, or a
    window opened meanwhile, is never touched (a session goes with its last pane)."""
    args: list[str] = []
    for pane_id in pane_ids:
        args += ["if-shell", "-F", "-t", pane_id, PANE_STATES, f"kill-pane -t {pane_id}", SEP]
    return args[:-1]


def capture(pane_id: str, lines: int) -> list[str]:
    return ["capture-pane", "-p", "-J", "-S", f"-{lines}", "-t", pane_id]


def load_buffers(prompt_buffer: str, submit_buffer: str) -> list[str]:
    """The prompt comes from stdin; the submit is a constant carriage return."""
    return ["load-buffer", "-b", prompt_buffer, "-", SEP, "set-buffer", "-b", submit_buffer, "\r"]


def guarded(target: TmuxTarget, buffers: Sequence[str], pastes: Sequence[str], *, pane_id: str, mark: str) -> list[str]:
    """Run `pastes` only if `pane_id` is alive, still `target`'s and still carries `mark`, in the
    same command, so nothing changes between check and paste: pasting into a dead pane crashes the
    tmux 3.3 server, and any other pane may be an operator's shell. Otherwise deletes `buffers` and
    prints DEAD_MARKER."""
    dead = [*(f"delete-buffer -b {b}" for b in buffers), f"display-message -p {DEAD_MARKER}"]
    condition = harness_pane_dead_or_foreign(target, pane_id, mark)
    return ["if-shell", "-F", "-t", pane_id, condition, " ; ".join(dead), " ; ".join(pastes)]


def paste(buffer: str, *, bracketed: bool, pane_id: str) -> str:
    # no -r: a newline goes out as CR, as terminals paste it; -r (LF) would not stop a cooked
    # or readline program from running each line either, and the harness is not such a program
    flags = "-p -d" if bracketed else "-d"
    return f"paste-buffer {flags} -b {buffer} -t {pane_id}"


def delete_buffers(buffers: Sequence[str]) -> list[str]:
    """Delete `buffers` whether or not they exist (deleting a missing one is an error)."""
    args: list[str] = []
    for name in buffers:
        args += ["set-buffer", "-b", name, "x", SEP, "delete-buffer", "-b", name, SEP]
    return args[:-1]
