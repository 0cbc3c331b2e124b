"""`HarnessUsage`: what one turn cost, read by the usage reader of the harness package whose hooks
the item's harness runs (`adapters.harnesses.<name>.usage`, its `USAGE`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from domain.model import HarnessSpec
from domain.ports import UsagePort
from domain.receipts import EndedTurn
from domain.usage import Usage, UsageUnknown

Reader = Callable[[EndedTurn], Usage]  # a package's USAGE: a prompt's turn, what it cost
# the daemon acts on a turn's end within a quarter second of its hook's receipt, and the agent writes the
# turn's end to its transcript once its hook is over: tens of milliseconds later. A turn not written
# whole by then is read again this long at most, on its item's lane, before it is said unknown
SETTLE_SECONDS = 1.0
_AGAIN_SECONDS = 0.05


class HarnessUsage(UsagePort):
    def __init__(
        self,
        readers: Mapping[str, Reader],
        *,
        settle_seconds: float = SETTLE_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
        pause: Callable[[float], None] = time.sleep,
    ) -> None:
        self._readers = dict(readers)  # by configured harness: the reader of the package whose hooks it runs
        self._settle = settle_seconds
        self._monotonic = monotonic
        self._pause = pause

    def turn_usage(self, harness: str, turn: EndedTurn) -> Usage:
        reader = self._readers.get(harness)
        if reader is None:
            return UsageUnknown(f"the harness {harness!r} has no usage reader")
        deadline = self._monotonic() + self._settle
        while True:
            found = reader(turn)
            if not (isinstance(found, UsageUnknown) and found.pending) or self._monotonic() >= deadline:
                return found
            self._pause(_AGAIN_SECONDS)


def harness_usage(harnesses: Mapping[str, HarnessSpec], readers: Mapping[str, Reader]) -> HarnessUsage:
    """Each configured harness read by the usage reader of the package whose hooks it runs (`readers`,
    by package: `adapters.harnesses.usage_readers`); a harness without hooks has none."""
    return HarnessUsage({name: readers[spec.hooks] for name, spec in harnesses.items() if spec.hooks in readers})
