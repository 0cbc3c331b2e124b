"""Parking: an item whose agent's turn failed on the API (a rate limit, an outage, a refused key)
waits, pastes nothing and spends no attempt, until the reset — then its agent is told once what the
failed turns were for, and the comments that queued meanwhile follow."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from domain.durations import duration
from domain.model import Comment
from domain.park import FailedTurn, Park, ParkCause, ParkRule
from domain.policy import Decision
from domain.prompts import event_prompt
from domain.receipts import Receipt, ReceiptKind, closed_turn
from domain.refs import WorkItemRef

# a failure within this long of a resume counts as "right after" it: the next wait doubles
RIGHT_AFTER = timedelta(minutes=10)
MAX_WAIT = timedelta(hours=6)
# the reset as Claude Code words it ("resets 3pm (UTC)", "resets at 2030-01-01T12:00:00Z")
_ISO = re.compile(r"\b(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2}))")
_RETRY_AFTER = re.compile(r"\bretry[- ]after[:= ]+(\d{1,6})\b", re.IGNORECASE)


# when the error names no reset: how long each kind waits before one careful try
DEFAULT_WAIT = {
    ParkCause.RATE_LIMIT: timedelta(minutes=5),
    ParkCause.SERVER_ERROR: timedelta(minutes=1),
}
OTHER_WAIT = timedelta(minutes=2)


def failed_turn(receipts: Sequence[Receipt], line: str) -> Receipt | None:
    """The TURN_FAILED receipt that ended the turn of the prompt holding `line`; None when its turn
    ended well or has not ended (each end closes the prompts `closed_turn` says it does)."""
    closed = closed_turn(receipts, line)
    return closed.end if closed is not None and closed.end.kind is ReceiptKind.TURN_FAILED else None


def reset_named(text: str, *, now: datetime) -> datetime | None:
    """The reset time an error message names, when it names one the-loop can read: an ISO time,
    or a retry-after in seconds. The text is the harness's (untrusted): only a time is taken from it."""
    found = _ISO.search(text)
    if found is not None:
        try:
            at = datetime.fromisoformat(found.group(1).replace("Z", "+00:00"))
        except ValueError:
            at = None
        if at is not None and at.tzinfo is not None:
            return at.astimezone(UTC)
    seconds = _RETRY_AFTER.search(text)
    return now + timedelta(seconds=int(seconds.group(1))) if seconds else None


def park(
    error: str, message: str, *, comment: FailedTurn | None, now: datetime, previous: Park | None
) -> Decision[Park]:
    """The park a failed turn puts the item in. A park already on (another queued turn failing
    too) keeps its time and adds the comment. A failure right after a resume waits twice as long as
    the last wait did; the wait never shrinks below what the error names, and never passes MAX_WAIT.
    A resumed park's comments are carried over while the resume prompt's turn has not ended well.
    `now` is when the turn failed: the wait counts from then."""
    cause = ParkCause.of(error)
    if previous is not None and not previous.resuming:
        comments = previous.comments + ((comment,) if comment is not None and comment not in previous.comments else ())
        return Decision(replace(previous, comments=comments), "already parked: the turn joins the episode")
    carried = previous.comments if previous is not None else ()
    comments = carried + ((comment,) if comment is not None and comment not in carried else ())
    if cause.waits_for_operator:
        why = "the API refused the credentials: parked until an operator acts (`the-loop resume`)"
        return Decision(Park(cause, now, None, comments, detail=error, rule=ParkRule.OPERATOR), why)
    named = reset_named(message, now=now)
    wait = DEFAULT_WAIT.get(cause, OTHER_WAIT)
    why = f"{cause.value}: "
    if named is not None and named > now:
        wait, rule = named - now, ParkRule.NAMED_RESET
        why += "the error names its reset"
    else:
        rule = ParkRule.DEFAULT_WAIT
        why += f"no reset named, the default wait of {wait.total_seconds():g}s"
    if previous is not None and previous.resumed_at is not None and now - previous.resumed_at <= RIGHT_AFTER:
        doubled = timedelta(seconds=2 * previous.wait_seconds)
        if doubled > wait:
            wait, rule = doubled, ParkRule.DOUBLED
            why += f"; failed again right after a resume: the wait doubles to {wait.total_seconds():g}s"
    if wait > MAX_WAIT:
        wait, rule = MAX_WAIT, ParkRule.LONGEST
        why += f"; cut to the longest wait, {MAX_WAIT.total_seconds():g}s"
    return Decision(Park(cause, now, now + wait, comments, wait.total_seconds(), detail=error, rule=rule), why)


def resume_prompt(item: WorkItemRef, park: Park, comments: Sequence[Comment], *, receipt: str) -> str:
    """The one prompt at a reset: what happened, then each comment whose turn failed, framed as any
    comment is (its delivery id and link, its text fenced as untrusted data)."""
    failed = "\n".join(event_prompt(comment, receipt=f"Failed delivery: {comment.delivery_id}") for comment in comments)
    lost = len(park.comments) - len(comments)
    gone = f"({lost} of them deleted since: not given again.)\n" if lost > 0 else ""
    return (
        f"[the-loop] Resuming {item}: your turns for the comments below failed on the API "
        f"({park.cause.value}) and were not acted on. Work on them now, in order; newer comments follow.\n"
        f"{receipt}\n{gone}\n{failed}"
    )


def park_line(park: Park | None, now: datetime) -> str:
    """How a park reads in the status reply and `sessions list`: parked until when, and since when."""
    if park is None or park.resuming:
        return ""
    since = duration((now - park.since).total_seconds(), parts=1, least=2)
    return f"{parked_until(park.cause, park.until)}, for {since}"


def parked_until(cause: ParkCause, until: datetime | None) -> str:
    """A park in a few words: its cause, and until when."""
    said = f"until {until:%Y-%m-%d %H:%M:%S} UTC" if until else "until an operator resumes it"
    return f"parked ({cause.value}) {said}"
