"""Every tmux session's panes in one `list-panes -a` (the lean `sessions list`).

The full listing probes each session with its own `list-panes -s -t =<name>:` through the runner
(`adapters.tmux.runner`: logging, subprocess); a listing started for an operator asks once, through a
bare `posix_spawn`, and reads the same rows (`PANES`, `PaneRow`) under each session's name. Like the
runner it gives the client nameless in-memory files, not pipes, and waits on its exit through a
pidfd. Whatever is not a clean answer raises `TmuxUnanswered`: its caller then takes the full path,
which asks as it always does (and asks again when the server went away under it).
"""

from __future__ import annotations

import math
import os
import select

from adapters.tmux.answers import names_no_server
from adapters.tmux.commands import PANES
from adapters.tmux.panes import PaneRow
from domain.errors import TmuxUnanswered

_FORMAT = "#{session_name}\t" + PANES


def sessions_panes(*, socket_name: str, timeout: float, binary: str = "tmux") -> dict[str, list[PaneRow]]:
    """Each session's name: the rows of its panes that read as rows (none: tmux listed nothing
    readable). No session when no server runs."""
    prefix = ["-L", socket_name] if socket_name else []
    status, out, err = _run([binary, *prefix, "list-panes", "-a", "-F", _FORMAT], timeout)
    if status != 0:
        if names_no_server(err):
            return {}
        raise TmuxUnanswered(f"tmux list-panes said {status}: {err.strip()}")
    sessions: dict[str, list[PaneRow]] = {}
    for line in out.splitlines():
        name, _, fields = line.partition("\t")
        rows = sessions.setdefault(name, [])
        if (row := PaneRow.parse(fields)) is not None:
            rows.append(row)
    return sessions


def _run(argv: list[str], timeout: float) -> tuple[int, str, str]:
    """The client's exit status, stdout and stderr; TmuxUnanswered when it did not exit by itself
    within `timeout` seconds, could not start, or was killed by a signal."""
    out, err = os.memfd_create("the-loop-tmux"), os.memfd_create("the-loop-tmux")
    source = os.open(os.devnull, os.O_RDONLY)
    try:
        actions = [(os.POSIX_SPAWN_DUP2, source, 0), (os.POSIX_SPAWN_DUP2, out, 1), (os.POSIX_SPAWN_DUP2, err, 2)]
        pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=actions)
        try:
            pidfd = os.pidfd_open(pid)
            try:
                ready = select.poll()
                ready.register(pidfd, select.POLLIN)
                exited = bool(ready.poll(max(0, math.ceil(timeout * 1000))))  # readable once it exited
            finally:
                os.close(pidfd)
        except BaseException:
            exited = False
            raise
        finally:
            if not exited:
                os.kill(pid, 9)
            status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        if not exited or status < 0:
            raise TmuxUnanswered(f"tmux list-panes did not answer within {timeout}s")
        return status, _read(out), _read(err)
    except OSError as exc:
        raise TmuxUnanswered(f"tmux list-panes could not run: {exc}") from exc
    finally:
        for fd in (out, err, source):
            os.close(fd)


def _read(fd: int) -> str:
    size = os.lseek(fd, 0, os.SEEK_END)
    return os.pread(fd, size, 0).decode("utf-8", "replace")
