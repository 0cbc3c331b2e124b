"""Domain exceptions: failures of the outside world and of bad input, named."""

from __future__ import annotations


class LoopError(Exception):
    """Base of every error the-loop raises on purpose."""


class InvalidRef(LoopError, ValueError):
    """Text that is not a work item ref, repository or tmux target."""


class TmuxUnanswered(LoopError):
    """tmux did not answer: timeout, OSError, or no binary. Never read as 'absent'."""


class TmuxFailed(LoopError):
    """tmux answered with a non-zero exit status."""

    def __init__(self, command: str, status: int, stderr: str) -> None:
        super().__init__(f"tmux {command} exited {status}: {stderr.strip()}")
        self.command = command
        self.status = status
        self.stderr = stderr


class DuplicateSession(TmuxFailed):
    """`new-session` refused: `duplicate session: <name>` (authoritative: the name is held)."""


class SessionMissing(LoopError):
    """A delivery found the target absent or its pane dead (tmux answered)."""


class TrackerError(LoopError):
    """The tracker could not be read or written (names the repository and the cause)."""


class RateLimited(TrackerError):
    """The tracker asked us to wait until `until_epoch` (seconds since the epoch)."""

    def __init__(self, message: str, *, until_epoch: float) -> None:
        super().__init__(message)
        self.until_epoch = until_epoch


class StateError(LoopError):
    """The state store is unreadable, corrupt or of an unknown schema (names the file)."""


class WorkspaceError(LoopError):
    """A work item's workspace could not be made, inspected or removed: git's own message (or
    the setup command's), and where."""
