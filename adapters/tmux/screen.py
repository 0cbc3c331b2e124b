"""Reading what a tmux pane shows: the demo waits on it and prints it."""

from __future__ import annotations

from collections.abc import Mapping

from adapters.tmux.commands import pane
from adapters.tmux.runner import ShRunner, TmuxRunner
from domain.errors import LoopError
from domain.refs import TmuxTarget

HISTORY = 100


class ShTmuxScreen:
    """`capture-pane` on the target's active pane, through the tmux adapter's runner.

    Never raises: a session that is absent, or a tmux that does not answer within `timeout`,
    reads as an empty screen (the caller is waiting for text and keeps waiting).
    """

    def __init__(
        self,
        *,
        socket_name: str = "",
        binary: str = "tmux",
        timeout: float = 5.0,
        env: Mapping[str, str] | None = None,
        runner: TmuxRunner | None = None,
    ) -> None:
        self._prefix = ["-L", socket_name] if socket_name else []
        self._runner = runner or ShRunner(binary=binary, env=env)
        self._timeout = timeout

    def text(self, target: TmuxTarget) -> str:
        """The pane's last `HISTORY` lines of scrollback and its screen, as plain text (`-J`
        joins lines tmux wrapped); tmux scrolls a dead pane's last output off the screen."""
        args = ["capture-pane", "-p", "-J", "-S", f"-{HISTORY}", "-t", pane(target)]
        try:
            return self._runner([*self._prefix, *args], timeout=self._timeout)
        except LoopError:
            return ""
