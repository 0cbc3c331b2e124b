"""GitHub: `GhTracker` implements `TrackerPort` through `gh`, logged in as the operator or acting
as a GitHub App; `GhWebhookServer` receives GitHub's signed webhook deliveries."""

from adapters.github.tracker import GhTracker

__all__ = ["GhTracker"]
