"""What tmux's answers on stderr say: every reader of tmux classifies them here (imports nothing,
so the lean `sessions list` reads them without the runner's imports)."""

from __future__ import annotations


def names_missing_target(stderr: str) -> bool:
    """tmux answered: the session (or its window or pane) does not exist. "no current target" is
    what a server with no session left (it is shutting down) says for an exact target."""
    missing = any(f"can't find {what}" in stderr for what in ("session", "window", "pane"))
    return missing or "no current target" in stderr


def names_no_server(stderr: str) -> bool:
    """tmux answered: no server listens on the socket, so no session exists."""
    if "no server running" in stderr:
        return True
    return "error connecting to" in stderr and ("No such file or directory" in stderr or "Connection refused" in stderr)


def names_duplicate_session(stderr: str) -> bool:
    return "duplicate session" in stderr


def names_lost_server(stderr: str) -> bool:
    """The client lost its server before the answer (it died or was killed mid-command): what
    the command did is unknown, so tmux did not answer."""
    return "server exited unexpectedly" in stderr or "lost server" in stderr
