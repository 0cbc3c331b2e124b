"""What the read-only commands print, made in one place for both of their paths: the full one
(`CliContext`, the container) and the lean one (`app.cli.fast_reads`, from the settings snapshot).

A change to the output of `status`, `sessions list` or `events` is made here (or in
`app.cli.events_view`, `app.usecases.poller_status.describe`), never in one path alone. Imports the
standard library and `app.usecases.poller_status` only: the lean path's start depends on it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.usecases.poller_status import PollerStatus


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
) -> str:
    """`status`'s output; `cluster`/`cluster_lines`/`slot_waits` only when hosts share the state
    (PostgreSQL): the hosts, and the items that wait for a free slot."""
    from app.usecases.poller_status import describe

    shown = status.as_json() | dict(where)
    if cluster is not None:  # a host alone shows what it always did
        shown |= {"cluster": dict(cluster), "store": {"reachable": True}}
        shown["waiting_for_slot"] = [dict(wait) for wait in slot_waits]
    return json.dumps(shown) if json_out else "\n".join([*describe(status), *cluster_lines])


def no_sessions_line(status: str | None, state_root: Path) -> str:
    """What `sessions list` says (on stderr) when no session matches."""
    with_status = f" with status {status}" if status else ""
    return f"no sessions recorded{with_status} in {state_root}"
