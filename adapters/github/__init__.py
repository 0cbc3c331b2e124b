"""GitHub: `GhTracker` implements `TrackerPort` through the operator's own `gh`;
`GhWebhookServer` receives GitHub's signed webhook deliveries."""

from adapters.github.tracker import GhTracker

__all__ = ["GhTracker"]
