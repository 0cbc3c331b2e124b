"""`doctor --fix`: what a failed check may write for the operator, and only with their consent."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol

from adapters.agents.doctor import Repair
from domain.errors import LoopError


class FirstRunWriter(Protocol):
    """Writes Claude Code's first-run entries into its user configuration, keeping every other key.

    Failure modes: `LoopError` naming the file — not a JSON object, unreadable, unwritable, or changed
    by another writer before each attempt; nothing is half-written.
    """

    def complete(self, path: Path, *, approve: str) -> tuple[str, ...]:
        """Record the first run done at `path` (and the key ending in `approve` approved, when given);
        the keys written (empty: all there already)."""


Consent = Callable[[str], bool]


def repair(
    repairs: Iterable[Repair], *, writer: FirstRunWriter, consent: Consent | None, say: Callable[[str], None]
) -> bool:
    """Each repair the operator consents to (`consent` None: no one to ask, nothing written), said
    line by line; whether any was written."""
    wrote = False
    for wanted in dict.fromkeys(repairs):
        if consent is None:
            say(
                f"– not written (no consent): {wanted.says()} — run `the-loop doctor --fix` on a terminal, or add --yes"
            )
            continue
        if not consent(wanted.says()):
            say(f"– not written: {wanted.says()}")
            continue
        try:
            keys = writer.complete(wanted.path, approve=wanted.approve)
        except LoopError as error:
            say(f"✗ not written: {error}")
            continue
        say(f"✓ wrote {', '.join(keys)} in {wanted.path}" if keys else f"✓ already there in {wanted.path}")
        wrote = wrote or bool(keys)
    return wrote
