"""What the read-only commands print, made in one place for both of their paths: the full one
(`CliContext`, the container) and the lean one (`app.cli.fast_reads`, from the settings snapshot).

A change to the output of `status`, `sessions list` or `events` is made here (or in
`app.cli.events_view`, `app.usecases.views.poller_status.describe`), never in one path alone. Imports the
standard library, `app.usecases.views.poller_status`, `app.usecases.views.session_shown` and `domain.asks`
(when used) only: the lean path's start depends on it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.usecases.views.poller_status import PollerStatus
    from app.usecases.views.session_shown import Shown
    from domain.fleet import ItemStatus

COLUMNS = (
    "WORK ITEM", "HARNESS", "CONVERSATION", "TARGET", "STATE", "AGENT", "LAST RECEIPT", "STATUS", "LAST EVENT",
    "ITEM STATE", "SPENT",
)  # fmt: skip


def where_line(config_path: Path | None, state_root: Path) -> str:
    """What a command on a terminal says first: the file it read and the state it works on."""
    config = str(config_path) if config_path else "none, the built-in demo configuration"
    return f"config: {config} · state: {state_root}"


def where_json(config_path: Path | None, state_root: Path) -> dict[str, str | None]:
    """The same as fields of a `--json` object (`config` null: the built-in demo configuration)."""
    return {"config": str(config_path) if config_path else None, "state_root": str(state_root)}


def status_output(
    status: PollerStatus,
    where: Mapping[str, str | None],
    *,
    json_out: bool,
    cluster: Mapping[str, Any] | None = None,
    cluster_lines: tuple[str, ...] = (),
    slot_waits: Sequence[Mapping[str, Any]] = (),
    attention: Mapping[str, ItemStatus] | None = None,
) -> str:
    """`status`'s output; `cluster` only when hosts share the state (PostgreSQL): the hosts;
    `cluster_lines`: theirs, or a host alone's slots, and the items that wait for a free slot
    (`slot_waits`). `attention`: the items that need it (`app.usecases.views.attention`), each by
    its state's line."""
    from app.usecases.views.poller_status import describe

    attention = attention or {}
    shown = status.as_json() | dict(where)
    shown["needs_attention"] = [{"work_item": item} | shows.as_json() for item, shows in attention.items()]
    if cluster is not None:  # a host alone shows what it always did
        shown |= {"cluster": dict(cluster), "store": {"reachable": True}}
    shown["waiting_for_slot"] = [dict(wait) for wait in slot_waits]
    if json_out:
        return json.dumps(shown)
    return "\n".join([*describe(status), *cluster_lines, *attention_lines(attention, status.now)])


def attention_lines(attention: Mapping[str, ItemStatus], now: datetime) -> list[str]:
    """`status`'s "needs attention" list: one line an item, its state as every view says it."""
    if not attention:
        return ["needs attention: none"]
    return [
        f"needs attention: {len(attention)}",
        *(f"  {item}  {shows.line(now)}" for item, shows in attention.items()),
    ]


def no_sessions_line(status: str | None, state_root: Path) -> str:
    """What `sessions list` says (on stderr) when no session matches."""
    with_status = f" with status {status}" if status else ""
    return f"no sessions recorded{with_status} in {state_root}"


def session_json(view: Shown, where: Mapping[str, str | None], host: Mapping[str, object] | None = None) -> str:
    """One `sessions list --json` line."""
    from app.usecases.views.session_shown import shown_json

    return json.dumps(shown_json(view) | dict(host or {}) | dict(where), ensure_ascii=True)


def session_row(view: Shown, *, shared: bool = False) -> tuple[str, ...]:
    """One row of the `sessions list` table (`shared`: with the HOST column first)."""
    from app.usecases.views.session_shown import has_session, spent_text, state_text, status_text

    record = view.record
    if not has_session(view):  # an item `pause` / `stop` holds, never spawned
        held = (str(record.item), "", "", "", "no session", "", "", status_text(view), "", state_text(view), "")
        return tuple(cell or "-" for cell in ((view.host, *held) if shared else held))
    cells = (
        str(record.item),
        record.harness,
        record.harness_session_id,
        record.target.name,
        view.state.value if view.here else "",  # another host's tmux: not looked at from here
        _agent(view) if view.here else "",
        _receipt(view) if view.here else "",
        status_text(view) + (f", {view.parked}" if view.parked else ""),
        record.last_event,
        state_text(view),
        spent_text(view.spent),
    )
    return tuple(cell or "-" for cell in ((view.host, *cells) if shared else cells))


def _agent(view: Shown) -> str:
    """Its state; blocked, what on and for how long: `blocked: permission Bash 2m05s`."""
    waiting, now = view.waiting, view.now
    if waiting is None:
        return view.harness.value
    from domain.durations import duration  # a blocked agent's only: the lean `sessions list` starts without it

    seconds = waiting.seconds(now) if now else None
    parts = [f"{view.harness.value}:", waiting.on.value, waiting.tool, duration(seconds) if seconds is not None else ""]
    return " ".join(part for part in parts if part)


def _receipt(view: Shown) -> str:
    receipt = view.last_receipt
    if receipt is None:
        return ""
    return receipt.kind.value + (f" {receipt.at:%H:%M:%S}" if receipt.at else "")


def table(rows: Sequence[tuple[str, ...]]) -> list[str]:
    """Aligned columns; control characters shown as escapes, never sent to the terminal."""
    shown = [tuple(cell.encode("unicode_escape").decode("ascii") for cell in row) for row in rows]
    widths = [max(len(row[i]) for row in shown) for i in range(len(shown[0]))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in shown]
