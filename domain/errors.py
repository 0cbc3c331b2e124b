"""Domain exceptions: failures of the outside world and of bad input, named."""

from __future__ import annotations


class LoopError(Exception):
    """Base of every error the-loop raises on purpose."""


class InvalidRef(LoopError, ValueError):
    """Text that is not a work item ref, repository or tmux target."""


class AmbiguousRef(InvalidRef):
    """A short work item ref several watched repositories could mean; the message lists them."""


class TmuxUnanswered(LoopError):
    """tmux did not answer: timeout, OSError, or no binary. Never read as 'absent'."""


class ServerLost(TmuxUnanswered):
    """The tmux client lost its server mid-command (it exited or was killed): what the command did
    is unknown. A read may be asked again: the next client finds the server gone, or a new one."""


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


class StaleWrite(StateError):
    """A versioned write found the stored row moved on since the value was read: someone else
    (an operator's command, another process) wrote or forgot it. Nothing was written."""

    def __init__(self, what: str, item: str, *, read: int, stored: int) -> None:
        now = f"it is at version {stored}" if stored else "it is no longer stored"
        super().__init__(f"stale write of the {what} of {item}: read at version {read}, {now}")
        self.what = what
        self.item = item
        self.read = read
        self.stored = stored


class TrustError(LoopError):
    """Claude Code's user configuration could not be read, parsed or written (names the file)."""


class MissingVariable(LoopError):
    """A harness's `env` or `passEnv` names a variable the daemon's environment does not set; the
    message names the harness, the keys and the variables, never a value."""


class WorkspaceError(LoopError):
    """A work item's workspace could not be made, inspected or removed: git's own message (or
    the setup command's), and where."""


class CredentialsRefused(WorkspaceError):
    """A git remote refused the credentials git was given (HTTP 401: a token expired or revoked),
    where a new token may be taken; git's message, and where."""


class StoreUnreachable(StateError):
    """The state store's database could not be reached (refused, timed out, connection lost):
    nothing was read or written. Unlike a corrupt or foreign store, it may come back."""


class WatchdogUnarmed(LoopError):
    """The host's agent watchdog does not guard the deadline it was given: the deadline could not be
    recorded, or no watchdog runs and none could be started."""


class LeaseLost(LoopError):
    """This host does not hold the work item's lease right now (never did, lost it, or cannot
    renew it in time): no tmux action was taken on its session."""

    def __init__(self, item: str, *, holder: str = "", reason: str = "") -> None:
        held = f"it is held by host {holder}" if holder else "this host does not hold its lease"
        super().__init__(f"{item}: {held}{f' ({reason})' if reason else ''}; no tmux action was taken")
        self.item = item
        self.holder = holder
