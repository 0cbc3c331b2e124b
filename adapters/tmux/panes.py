"""Reading `list-panes`: which pane is the harness's (by its mark), and what that says of a session."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from adapters.tmux import commands as cmd

if TYPE_CHECKING:
    from domain.model import Probe


@dataclass(frozen=True, slots=True)
class PaneRow:
    """One line of `list-panes` in the PANES format."""

    pane: str
    dead: bool
    pid: int
    mark: str

    @classmethod
    def parse(cls, line: str) -> PaneRow | None:
        fields = line.split(" ", 3)
        if len(fields) < 3 or not cmd.is_pane_id(fields[0]) or not fields[2].isdigit():
            return None
        return cls(fields[0], fields[1] == "1", int(fields[2]), fields[3].strip() if len(fields) > 3 else "")


def harness_row(rows: Sequence[PaneRow], *, mark: str, pane: str) -> PaneRow | None:
    """The pane carrying `mark`; with no mark (a record from before marks), the recorded `pane`,
    and only while no other mark claims it."""
    if mark:
        return next((row for row in rows if row.mark == mark), None)
    return next((row for row in rows if pane and row.pane == pane and not row.mark), None)


def probe_of(rows: Sequence[PaneRow], *, mark: str, pane: str) -> Probe:
    from domain.model import Probe, SessionState  # the lean `sessions list` reads rows without the model

    if not rows:
        return Probe.unknown()  # tmux answered but listed nothing readable: never read as absent
    session = SessionState.DEAD if all(row.dead for row in rows) else SessionState.LIVE
    found = harness_row(rows, mark=mark, pane=pane)
    if found is None:
        return Probe(session, SessionState.ABSENT, others_live=session is SessionState.LIVE)
    harness = SessionState.DEAD if found.dead else SessionState.LIVE
    others = any(not row.dead for row in rows if row.pane != found.pane)
    return Probe(session, harness, found.pane, others_live=others)
