"""One comment's story (`the-loop why`): which comment is asked about, and what became of it — from
its ledger entry and the events that name it. Never its text: that is the commenter's, untrusted."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from domain.authorize import Standing
from domain.errors import InvalidRef
from domain.holds import Hold, TurnFailed
from domain.ledger import (
    ASIDE_EDITED,
    ASIDE_HISTORY,
    ASIDE_UNAUTHORIZED,
    DeliveryState,
    Pending,
    Resolution,
    Resolved,
)
from domain.model import DeliveryId
from domain.refs import ItemSpec

_FRAGMENT = re.compile(r"#(?:issuecomment-|discussion_r)(?P<id>[0-9]+)$")
_BARE = re.compile(r"^[0-9]+$")
_FORMS = "expected a comment id or its URL (https://HOST/OWNER/REPO/issues/N#issuecomment-ID, …/pull/N#discussion_rID)"
Record = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class CommentQuery:
    """A comment asked about: its id, and its item when the URL names it."""

    comment_id: str
    item: ItemSpec | None = None

    @classmethod
    def parse(cls, text: str) -> CommentQuery:
        text = text.strip()
        if _BARE.match(text):
            return cls(text)
        found = _FRAGMENT.search(text)
        if found is None:
            raise InvalidRef(f"{text!r}: {_FORMS}")
        return cls(found["id"], ItemSpec.parse(text[: found.start()]))


def names(record: Record, comment_id: str) -> bool:
    """Whether an event is about this comment: its id, its delivery id, or a list of ids holding it."""
    if record.get("comment_id") == comment_id:
        return True
    if record.get("delivery_id") == str(DeliveryId.for_comment(comment_id)):
        return True
    listed = record.get("comment_ids")
    return isinstance(listed, list) and comment_id in listed


_SKIPPED = {
    ASIDE_EDITED: "not a prompt: edited, before the-loop first read it, by someone not authorized",
    "not-for-the-agent": "not a prompt: it does not hold routing.trigger",
    "session-stopped": "not delivered: its item was stopped (held by `the-loop stop` until `the-loop start`)",
    "session-closed": "not delivered: an operator closed its session (held by `sessions close` until "
    "`sessions reopen`)",
    "session-occupied": "not delivered: a dead session held its name and could not be cleared",
    "comment-deleted": "not delivered: the comment was deleted before it went in",
}
# why an author was refused, as the event that said it names it (`standing`)
_REFUSED = {
    Standing.DENIED.value: " is in routing.authorize.deny",
    Standing.BELOW.value: "'s permission on its repository is below routing.authorize.permission",
    Standing.UNKNOWN.value: "'s permission on its repository could not be read (authorize.lookup_failed): "
    "not authorized",
}
_WAITING = {
    DeliveryState.QUEUED: "waiting: queued, no attempt yet",
    DeliveryState.HELD: "waiting: held by `the-loop pause`; it goes right after `the-loop resume`",
    DeliveryState.ATTEMPTING: "waiting: an attempt is under way",
    DeliveryState.PASTED: "waiting: pasted, the harness has yet to confirm it",
    DeliveryState.UNCONFIRMED: "waiting: the harness did not confirm the last attempt; tried again next cycle",
    DeliveryState.FAILED: "waiting: the last attempt failed; tried again next cycle",
}


def verdict(
    resolved: Resolved | None,
    pending: Pending | None,
    records: Iterable[Record],
    *,
    held: Hold | None = None,
    failed: TurnFailed | None = None,
    kept: bool = False,
) -> str:
    """What became of the comment, in one line: for a waiting one, the rule or state that holds it
    (`held`); for a delivered one, whether its turn then failed on the API (`failed`); for one kept
    in the inbox that its item's worker has not taken yet (`kept`), what holds the item."""
    seen = list(records)
    if pending is not None:
        waiting = f"waiting: {held.said()}" if held is not None else _WAITING[pending.state]
        return f"{waiting} (attempts so far: {pending.attempts})"
    if resolved is None and kept:
        if held is not None:
            return f"waiting: {held.said()} (kept for its item, no attempt yet)"
        return "kept for its item: taken at its next look (no attempt yet)"
    if resolved is None:
        return _unresolved(seen)
    author = next((str(r["author"]) for r in seen if r.get("author")), "unknown")
    standing = next((str(r["standing"]) for r in seen if r.get("standing")), "")  # why an author was refused
    said = f"{_resolved(resolved, author, standing)} (resolved {resolved.at:%Y-%m-%d %H:%M:%S})"
    if failed is not None and resolved.kind is Resolution.DELIVERED:
        said += f"; {failed.said()}"
    return said


def _unresolved(seen: list[Record]) -> str:
    """Why a comment the ledger never took is not a prompt: one of ours, by login or by marker."""
    ours = [str(r.get("rule", "")) for r in seen if r.get("event") == "poll.comment_ours"]
    if "login" in ours:
        return "not a prompt: the-loop posted it, as the login it writes as"
    if ours:
        return "not a prompt: it carries the agent marker (the-loop's own, or the agent's)"
    return "not in the ledger: no ingress brought it as a candidate (see the events below)"


def _resolved(resolved: Resolved, author: str, standing: str) -> str:
    kind, reason, attempts = resolved.kind, resolved.reason, resolved.attempts
    if kind is Resolution.DELIVERED:
        how = reason.removeprefix("confirmed:") or "a receipt"
        return f"delivered: the harness confirmed it ({how}) after {attempts} attempt(s)"
    if kind is Resolution.ABANDONED:
        return f"abandoned after {attempts} attempt(s) by version {resolved.version}: not retried"
    if kind is Resolution.CONTROL:
        return f"a control comment (`the-loop {reason}`), executed; never delivered"
    if kind is Resolution.BASELINED:
        why = "before its item was armed" if reason in {ASIDE_HISTORY, "first-sight"} else reason
        return f"not a prompt: written {why} (history)"
    if reason == ASIDE_UNAUTHORIZED:
        return f"not a prompt: its author {author}" + _REFUSED.get(standing, " is not in routing.authorizedUsers")
    return _SKIPPED.get(reason, f"skipped: {reason}")
