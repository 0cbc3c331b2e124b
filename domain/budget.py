"""A tracker's request budget: light on its own, so `status` reads it without the domain model."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RateBudget:
    """A tracker host's request budget as its last reply stated it (GitHub's `x-ratelimit-*`):
    requests left of `limit`, and when the count starts again (epoch seconds, on our clock)."""

    remaining: int
    limit: int
    reset_epoch: float
