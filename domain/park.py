"""A park's values: why an item parked, which rule set its end, the turns that failed and what
ended it. The registry entry holds a park; domain/parking.py decides one."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from domain.comment_kind import CommentKind


class ParkCause(enum.Enum):
    """Why the item is parked: what the harness said its failed turn hit."""

    RATE_LIMIT = "rate_limit"
    SERVER_ERROR = "server_error"
    AUTHENTICATION = "authentication_failed"  # parks until an operator acts
    OTHER = "other"

    @classmethod
    def of(cls, error: str) -> ParkCause:
        return next((c for c in cls if c.value == error), cls.OTHER)

    @property
    def waits_for_operator(self) -> bool:
        return self is ParkCause.AUTHENTICATION

    @property
    def words(self) -> str:
        """The cause as the park notice says it."""
        return _CAUSE_WORDS[self]


_CAUSE_WORDS = {
    ParkCause.RATE_LIMIT: "a rate limit",
    ParkCause.SERVER_ERROR: "a server error",  # 5xx, 529 overloaded included: the harness names them alike
    ParkCause.AUTHENTICATION: "refused credentials",
    ParkCause.OTHER: "an API error",
}


class ParkRule(enum.Enum):
    """Which rule set the park's end: what `session.parked` names as `rule`, and the notice says."""

    NAMED_RESET = "named_reset"  # the reset the error named
    DEFAULT_WAIT = "default_wait"  # no reset named: the cause's default wait
    DOUBLED = "doubled"  # failed again right after a resume: twice the last wait
    LONGEST = "longest_wait"  # cut to MAX_WAIT
    OPERATOR = "operator"  # until an operator resumes it


class Unpark(enum.Enum):
    """What ended a park: what `session.unparked` names as `by`, and the edited notice says."""

    RESET = "reset"
    RESUME = "resume"  # an operator's `the-loop resume`

    @property
    def words(self) -> str:
        return "the reset was reached" if self is Unpark.RESET else "an operator's `the-loop resume`"


@dataclass(frozen=True, slots=True)
class FailedTurn:
    """A delivered comment whose agent turn failed: given again at the reset."""

    comment_id: str
    kind: CommentKind


@dataclass(frozen=True, slots=True)
class Park:
    """An item parked: since when, until when (None: until an operator resumes it), the comments
    whose turns failed (their ids, in order), and whether its one notice was posted."""

    cause: ParkCause
    since: datetime
    until: datetime | None
    comments: tuple[FailedTurn, ...] = ()
    wait_seconds: float = 0.0  # the wait this episode chose (doubled by a failure right after a resume)
    noticed: bool = False
    resumed_at: datetime | None = None  # set when the reset came: the resume prompt is being given
    detail: str = ""  # the error's kind as the harness named it (never its message)
    rule: ParkRule = ParkRule.DEFAULT_WAIT
    notice_id: str = ""  # the episode's notice, as posted: edited when the park ends

    def due(self, now: datetime) -> bool:
        return self.resumed_at is None and self.until is not None and now >= self.until

    @property
    def resuming(self) -> bool:
        return self.resumed_at is not None
