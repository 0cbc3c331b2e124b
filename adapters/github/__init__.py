"""GitHub through the operator's own `gh` binary."""

from adapters.github.tracker import GhTracker

__all__ = ["GhTracker"]
