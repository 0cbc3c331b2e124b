"""A GitHub App's installation tokens, kept in memory until a margin before they expire."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Minted:
    """A token as GitHub handed it out: the token, and the seconds it has left as GitHub counts them
    (its `expires_at` less the reply's `Date`, so this machine's clock being off does not matter)."""

    token: str = field(repr=False)
    lifetime: float


@dataclass(frozen=True, slots=True)
class _Held:
    token: str = field(repr=False)
    expires: float  # on `monotonic`


class InstallationTokens:
    """Each installation's token, asked of `mint` when there is none or it is within `margin` seconds
    of expiring; held in this object alone, never written anywhere.

    One refresh per installation at a time: threads finding no usable token wait for it; threads
    finding the token inside the margin but not yet expired go on with it while one of them refreshes.
    A failed refresh raises to its caller; the next call tries again.
    """

    def __init__(self, *, margin: float, monotonic: Callable[[], float]) -> None:
        self._margin = margin
        self._monotonic = monotonic
        self._held: dict[int, _Held] = {}
        self._locks: dict[int, threading.Lock] = {}
        self._guard = threading.Lock()

    def token(self, installation: int, mint: Callable[[], Minted]) -> str:
        now = self._monotonic()
        held = self._held.get(installation)
        if held is not None and now < held.expires - self._margin:
            return held.token
        lock = self._lock(installation)
        if held is not None and now < held.expires:
            if not lock.acquire(blocking=False):
                return held.token  # still good: another thread is refreshing it
        else:
            lock.acquire()
        try:
            held = self._held.get(installation)
            if held is not None and self._monotonic() < held.expires - self._margin:
                return held.token  # refreshed by the thread that held the lock before
            return self._mint(installation, mint)
        finally:
            lock.release()

    def refreshed(self, installation: int, stale: str, mint: Callable[[], Minted]) -> str:
        """A token to use instead of `stale`, which GitHub refused: the one another thread got
        meanwhile, else a new one, whatever the refused one's expiry said."""
        now = self._monotonic()
        with self._lock(installation):
            held = self._held.get(installation)
            if held is not None and held.token != stale and now < held.expires:
                return held.token
            self._held.pop(installation, None)  # refused: never handed out again
            return self._mint(installation, mint)

    def forget(self, installation: int) -> bool:
        """Drop the installation's token (deleted, suspended, or its permissions changed): its next
        call asks for a new one. Whether one was held."""
        with self._lock(installation):  # a refresh under way ends first: its token goes too
            return self._held.pop(installation, None) is not None

    def _mint(self, installation: int, mint: Callable[[], Minted]) -> str:
        minted = mint()
        # counted from when it arrived: later than GitHub's own start by the reply's way here, which
        # the margin covers
        self._held[installation] = _Held(minted.token, self._monotonic() + minted.lifetime)
        return minted.token

    def _lock(self, installation: int) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(installation, threading.Lock())
