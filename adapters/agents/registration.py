"""What a hooks harness registers (`adapters.harnesses.<name>.harness.HARNESS`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from domain.model import ReceiptChannel
from domain.ports import TrustPort


@dataclass(frozen=True, slots=True)
class Registration:
    """`channel(folder, ask_wait_seconds)`: what a spawn is handed so its receipts reach `folder` (its
    permission hook, where it has one, waits that long for an answer from the item); `trust()`: its
    writer of trusted folders in its user's configuration (None: it has no trust dialog the-loop answers)."""

    channel: Callable[[Path, float], ReceiptChannel]
    trust: Callable[[], TrustPort] | None = None
