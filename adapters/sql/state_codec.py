"""JSON encoding of the state store's values: ledgers, session records, comments."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from domain.errors import StateError
from domain.ledger import DeliveryState, Ledger, Pending, Resolution, Resolved, StartRequest, Turn
from domain.model import (
    ClosedBy,
    Comment,
    CommentKind,
    ItemKind,
    PostedRequest,
    SessionRecord,
    SessionStatus,
    WorkItem,
)
from domain.park import FailedTurn, Park, ParkCause, ParkRule
from domain.refs import Naming, WorkItemRef

Json = dict[str, Any]


@contextmanager
def decoding(store: str) -> Iterator[None]:
    """A row this version cannot decode, said as a `StateError` naming the store, not a crash mid-cycle."""
    try:
        yield
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise StateError(f"{store}: undecodable row: {exc!r}") from exc


def _when(value: datetime | None) -> str | None:
    # isoformat keeps the offset, so an aware UTC time comes back aware UTC
    return None if value is None else value.isoformat()


def _from_when(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def _required_when(text: str) -> datetime:
    return datetime.fromisoformat(text)


def comment_to_json(comment: Comment) -> Json:
    return {
        "id": comment.id,
        "item": str(comment.item),
        "author": comment.author,
        "body": comment.body,
        "created_at": _when(comment.created_at),
        "url": comment.url,
        "kind": comment.kind.value,
        "path": comment.path,
        "line": comment.line,
        "edited": comment.edited,
        "editor": comment.editor,
        "by_us": comment.by_us,
    }


def comment_from_json(data: Json) -> Comment:
    return Comment(
        id=data["id"],
        item=WorkItemRef.parse(data["item"]),
        author=data["author"],
        body=data["body"],
        created_at=_required_when(data["created_at"]),
        url=data["url"],
        kind=CommentKind(data["kind"]),
        path=data["path"],
        line=data["line"],
        edited=bool(data.get("edited", False)),
        editor=data.get("editor"),
        by_us=bool(data.get("by_us", False)),  # absent before a GitHub App's comments were told by login
    )


def _resolved_to_json(resolved: Resolved) -> Json:
    return {
        "kind": resolved.kind.value,
        "at": _when(resolved.at),
        "attempts": resolved.attempts,
        "version": resolved.version,
        "reason": resolved.reason,
        "written": _when(resolved.written),
    }


def _resolved_from_json(data: Json) -> Resolved:
    return Resolved(
        kind=Resolution(data["kind"]),
        at=_required_when(data["at"]),
        attempts=data["attempts"],
        version=data["version"],
        reason=data["reason"],
        written=_from_when(data.get("written")),  # absent before ledgers were pruned
    )


def encode_ledger(ledger: Ledger) -> str:
    start = ledger.start
    return _dump(
        {
            "item": str(ledger.item),
            "baseline_at": _when(ledger.baseline_at),
            "resolved": {cid: _resolved_to_json(r) for cid, r in ledger.resolved.items()},
            "pending": [
                {"comment": comment_to_json(p.comment), "attempts": p.attempts, "state": p.state.value}
                for p in ledger.pending
            ],
            "abandoned": {cid: comment_to_json(c) for cid, c in ledger.abandoned.items()},
            "armed_at": _when(ledger.armed_at),
            "start": None
            if start is None
            else {
                "reason": start.reason,
                "requested_at": _when(start.requested_at),
                "attempts": start.attempts,
                "harness": start.harness,
                "noticed": start.noticed,
            },
            "paused": ledger.paused,
            "stopped": ledger.stopped,
            "turns": [
                {"comment": t.comment_id, "kind": t.kind.value, "spawn": t.spawn, "author": t.author}
                for t in ledger.turns
            ],
            "horizon": _when(ledger.horizon),
            "unrouted_noticed": ledger.unrouted_noticed,
        }
    )


def decode_ledger(text: str, *, version: int) -> Ledger:
    # the version is the row's, kept beside the JSON: a copied JSON text cannot carry one in.
    # Keys added since schema 1 are optional: an older row reads with their defaults.
    data = json.loads(text)
    start = data.get("start")
    return Ledger(
        version=version,
        item=WorkItemRef.parse(data["item"]),
        baseline_at=_required_when(data["baseline_at"]),
        resolved={cid: _resolved_from_json(r) for cid, r in data["resolved"].items()},
        pending=tuple(
            Pending(
                comment=comment_from_json(p["comment"]),
                attempts=p["attempts"],
                state=DeliveryState(p.get("state", DeliveryState.QUEUED.value)),
            )
            for p in data["pending"]
        ),
        abandoned={cid: comment_from_json(c) for cid, c in data["abandoned"].items()},
        armed_at=_from_when(data.get("armed_at")),
        start=None
        if start is None
        else StartRequest(
            start["reason"],
            _required_when(start["requested_at"]),
            start["attempts"],
            start.get("harness", ""),
            noticed=bool(start.get("noticed", False)),
        ),
        paused=bool(data.get("paused", False)),
        stopped=bool(data.get("stopped", False)),
        turns=tuple(
            Turn(t["comment"], CommentKind(t["kind"]), t["spawn"], author=t.get("author", ""))
            for t in data.get("turns", ())
        ),
        horizon=_from_when(data.get("horizon")),
        unrouted_noticed=bool(data.get("unrouted_noticed", False)),
    )


def encode_session(record: SessionRecord) -> str:
    return _dump(
        {
            "item": str(record.item),
            "harness": record.harness,
            "harness_session_id": record.harness_session_id,
            "cwd": record.cwd,
            "status": record.status.value,
            "recent_delivery_ids": list(record.recent_delivery_ids),
            "pane_id": record.pane_id,
            "created_at": _when(record.created_at),
            "updated_at": _when(record.updated_at),
            "last_event": record.last_event,
            "spawn_id": record.spawn_id,
            "spawned_at": _when(record.spawned_at),
            "spawned_monotonic": record.spawned_monotonic,
            "hibernated_at": _when(record.hibernated_at),
            "hibernating": record.hibernating,
            "rss_bytes": record.rss_bytes,
            "closed_by": record.closed_by.value if record.closed_by else None,
            "blocked_notice": record.blocked_notice,
            "requests": [
                {
                    "key": r.key,
                    "number": r.number,
                    "posted_at": _when(r.posted_at),
                    "closed": r.closed,
                    "pending": r.pending,
                    "comment_id": r.comment_id,
                }
                for r in record.requests
            ],
            "requests_made": record.requests_made,
            "closed_notice": record.closed_notice,
            "host": record.host,
            "previous_host": record.previous_host,
            "naming": record.naming.value,
            "park": _park_to_json(record.park),
            "harness_group": record.harness_group,
            "permission_mode": record.permission_mode,
            "workspace": record.workspace,
            "title": record.title,
        }
    )


def _park_to_json(park: Park | None) -> Json | None:
    if park is None:
        return None
    return {
        "cause": park.cause.value,
        "since": _when(park.since),
        "until": _when(park.until),
        "comments": [{"id": c.comment_id, "kind": c.kind.value} for c in park.comments],
        "wait_seconds": park.wait_seconds,
        "noticed": park.noticed,
        "notice_id": park.notice_id,
        "rule": park.rule.value,
        "resumed_at": _when(park.resumed_at),
        "detail": park.detail,
    }


def _park_from_json(data: Json | None) -> Park | None:
    if not data:
        return None  # records from before parking have none
    return Park(
        cause=ParkCause(data["cause"]),
        since=_required_when(data["since"]),
        until=_from_when(data.get("until")),
        comments=tuple(FailedTurn(c["id"], CommentKind(c["kind"])) for c in data.get("comments", ())),
        wait_seconds=float(data.get("wait_seconds", 0.0)),
        noticed=bool(data.get("noticed", False)),
        resumed_at=_from_when(data.get("resumed_at")),
        detail=data.get("detail", ""),
        rule=ParkRule(data.get("rule", ParkRule.DEFAULT_WAIT.value)),  # parks from before the rule was kept
        notice_id=data.get("notice_id", ""),
    )


def decode_session(text: str, *, version: int) -> SessionRecord:
    data = json.loads(text)
    closed_by = data.get("closed_by")
    return SessionRecord(
        version=version,
        item=WorkItemRef.parse(data["item"]),
        harness=data["harness"],
        harness_session_id=data["harness_session_id"],
        cwd=data["cwd"],
        status=SessionStatus(data["status"]),
        recent_delivery_ids=tuple(data["recent_delivery_ids"]),
        pane_id=data.get("pane_id", ""),  # records written before panes were recorded have none
        created_at=_from_when(data["created_at"]),
        updated_at=_from_when(data["updated_at"]),
        last_event=data["last_event"],
        spawn_id=data.get("spawn_id", ""),  # nor a mark, before marks
        spawned_at=_from_when(data.get("spawned_at")),
        spawned_monotonic=data.get("spawned_monotonic"),  # records from before it was kept have none
        # a record closed before `closed_by` existed was closed upstream or by an operator: the
        # operator's close must hold, so an unknown closer counts as the operator
        closed_by=ClosedBy(closed_by) if closed_by else _legacy_closer(data),
        blocked_notice=data.get("blocked_notice", ""),
        # a record from before requests were numbered names its last one (`asked`) unnumbered: an
        # open one is posted again with its number, and answers written before that are refused
        requests=tuple(
            PostedRequest(
                r["key"],
                int(r["number"]),
                _required_when(r["posted_at"]),
                bool(r["closed"]),
                bool(r.get("pending", False)),  # records from before numbers were reserved first have none
                str(r.get("comment_id", "")),  # nor their comment's id, before answers edited it
            )
            for r in data.get("requests", ())
        ),
        requests_made=int(data.get("requests_made", 0)),
        closed_notice=data.get("closed_notice", ""),
        harness_group=data.get("harness_group", ""),  # records from before harness groups were kept have none
        hibernated_at=_from_when(data.get("hibernated_at")),  # nor a hibernation, before there was one
        hibernating=data.get("hibernating", ""),  # nor one being ended, before that was marked
        rss_bytes=data.get("rss_bytes"),  # nor a memory figure, before turns' ends measured it
        permission_mode=data.get("permission_mode", ""),  # records from before routing rules have none
        workspace=data.get("workspace", ""),  # nor a workspace, before rules named one
        host=data.get("host", ""),  # records from before clusters ran on the one host there was
        previous_host=data.get("previous_host", ""),
        # a record from before names were injective keeps the names its session, receipts and
        # branch were given then
        naming=Naming(data.get("naming", Naming.LEGACY.value)),
        park=_park_from_json(data.get("park")),
        title=data.get("title", ""),  # records from before titles were kept have none
    )


def _legacy_closer(data: Json) -> ClosedBy | None:
    if data.get("status") != SessionStatus.CLOSED.value or "closed_by" in data:
        return None
    return ClosedBy.OPERATOR


def item_fields(item: WorkItem) -> Json:
    """What a work item is besides its ref and creation time: as the store keeps it, and as each
    repository's kept GitHub listing does."""
    return {
        "title": item.title,
        "author": item.author,
        "labels": sorted(item.labels),
        "kind": item.kind.value,
        "body": item.body,
        "url": item.url,
    }


def item_of(data: Json, ref: WorkItemRef, created_at: datetime | None) -> WorkItem:
    """The work item `item_fields` wrote into `data`."""
    author = data["author"]
    return WorkItem(
        ref=ref,
        title=str(data["title"]),
        author=None if author is None else str(author),
        labels=frozenset(str(label) for label in data["labels"]),
        kind=ItemKind(data["kind"]),
        body=str(data["body"]),
        url=str(data["url"]),
        created_at=created_at,
    )


def encode_item(item: WorkItem) -> str:
    """A listed work item, with what a spawn on another host needs (title, body, author, labels, kind)."""
    return _dump({"ref": str(item.ref), **item_fields(item), "created_at": _when(item.created_at)})


def decode_item(text: str) -> WorkItem:
    data = json.loads(text)
    return item_of(data, WorkItemRef.parse(data["ref"]), _from_when(data["created_at"]))


def encode_comment(comment: Comment) -> str:
    return _dump(comment_to_json(comment))


def decode_comment(text: str) -> Comment:
    return comment_from_json(json.loads(text))


def _dump(data: Json) -> str:
    # ASCII-only output: any comment text (NUL, lone surrogates) survives the TEXT column
    return json.dumps(data, ensure_ascii=True, separators=(",", ":"))
