"""The process record of a real agent in the kill campaign: `python wrapper.py RECORD BINARY ARGS...`.

It runs `BINARY ARGS...` as its child, in the pane's foreground process group (so the agent's
terminal is the pane's, as without it), and records, one JSON object per line, as
tests/harness_sim.py does for the simulator — each line with the agent's `pid`:
  {"kind": "start", "cwd": ..., "server": ..., "resume": ..., "argv": [...], "env": [...], "wrapper": ...}
                                     ("env": the values of the variables that hand an agent its hooks)
  {"kind": "peers", "pids": [...]}   the agents of this record and folder still running at its start
  {"kind": "signal", "signum": ...}  SIGHUP or SIGTERM reached the pane (tmux or the-loop ended it),
                                     or a signal ended the agent itself
  {"kind": "exit", "status": ...}    the agent ended by itself (an unknown resume id, a bad flag)
A SIGKILL of the agent is recorded as its signal (by the wrapper); a SIGKILL of the wrapper too
leaves no line. What the agent *received* is not here: its own hooks and its model API say that
(bench/chaos/agents.py). The agent's environment carries `CHAOS_RECORD=RECORD`, by which the
campaign knows its processes. Self-contained: imports nothing of the project.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from typing import Any

MARK = "CHAOS_RECORD"
HOOK_VARIABLES = ("THE_LOOP_RECEIPTS", "OPENCODE_CONFIG_CONTENT", "OPENCODE_TUI_CONFIG")  # Gemini's, opencode's
RESUME_FLAGS = ("resume", "--resume", "--session")  # `codex resume ID`, `claude|gemini --resume ID`, opencode's


def running(pid: int, record: str) -> bool:
    """`pid` is an agent (or simulator) of this record file, and not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as file:
            state = file.read().rsplit(")", 1)[1].split()[0]
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            argv = file.read().split(b"\0")
        with open(f"/proc/{pid}/environ", "rb") as file:
            environ = file.read().split(b"\0")
    except (OSError, IndexError):
        return False
    mine = os.fsencode(record) in argv or os.fsencode(f"{MARK}={record}") in environ
    return state not in {"Z", "X"} and mine


def peers(record: str, own: int) -> list[int]:
    here, found = os.getcwd(), []
    with open(record, encoding="utf-8") as file:
        for line in file:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            pid = entry.get("pid")
            if entry.get("kind") == "start" and entry.get("cwd") == here and pid != own and pid:
                found.append(pid)
    return [pid for pid in dict.fromkeys(found) if running(pid, record)]


def resume_of(args: list[str]) -> str | None:
    for flag in RESUME_FLAGS:
        if flag in args[:-1]:
            return args[args.index(flag) + 1]
    return None


def main() -> int:
    record, binary, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.environ[MARK] = record
    ending = {signal.SIGTERM, signal.SIGHUP}
    signal.pthread_sigmask(signal.SIG_BLOCK, ending)  # none lost between the fork and the handlers
    child = os.fork()
    if child == 0:
        for signum in ending:  # the agent as a pane starts it, whatever the campaign inherited (nohup)
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, ending)
        try:
            os.execv(binary, [binary, *args])
        finally:
            os._exit(127)

    def line(kind: str, **fields: Any) -> None:
        text = json.dumps({"kind": kind, "pid": child, **fields}) + "\n"
        with open(record, "a", encoding="utf-8") as file:
            file.write(text)

    signalled: list[int] = []

    def ended(signum: int, frame: object) -> None:
        if not signalled:
            line("signal", signum=signum)
        signalled.append(signum)
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signum)

    hints = [os.environ[name] for name in HOOK_VARIABLES if name in os.environ]
    parts = os.environ.get("TMUX", "").split(",")
    server = int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None
    line("start", cwd=os.getcwd(), server=server, resume=resume_of(args), argv=args, env=hints, wrapper=os.getpid())
    line("peers", pids=peers(record, child))
    for signum in ending:
        signal.signal(signum, ended)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, ending)
    _, status = os.waitpid(child, 0)
    if os.WIFSIGNALED(status):
        if not signalled:
            line("signal", signum=os.WTERMSIG(status))
        return 128 + os.WTERMSIG(status)
    code = os.WEXITSTATUS(status)
    if not signalled:
        line("exit", status=code)
    return code


if __name__ == "__main__":
    sys.exit(main())
