"""`doctor`'s lines on what one installation of the GitHub App was granted, against what the-loop needs."""

from __future__ import annotations

from collections.abc import Iterator

from adapters.agents.doctor import Check, Mark
from domain.github_app import PERMISSIONS, InstallationGrant, Scope, missing_events, shortfalls


def grant_checks(grant: InstallationGrant) -> Iterator[Check]:
    """One ✓ when the installation holds every permission and event needed; else a line for each
    permission it lacks or holds too low (✗, or ! for one polling does without) and one for the
    events it is not sent (!), each with where on GitHub it is changed."""
    subject = f"installation {grant.installation}"
    lacking = shortfalls(grant)
    events = missing_events(grant)
    if not lacking and not events:
        held = ", ".join(p.shown for p in PERMISSIONS if p.scope is Scope.REPOSITORY or grant.organization)
        yield Check(Mark.OK, f"{subject} permissions", f"{held}; every event ({grant.account})")
        return
    accepts = (
        f"then {grant.account}, the installation's owner, accepts the change (GitHub asks them: their settings'"
        " Installed GitHub Apps › the App › Configure › Review request)"
    )
    for short in lacking:
        needed = short.permission
        held = short.granted.shown if short.granted is not None else "not granted"
        yield Check(
            Mark.FAILED if needed.essential else Mark.WARNING,
            f"{subject} permission {needed.title}",
            f"{held}; the-loop needs {needed.access.shown}: {needed.purpose}",
            f"give the App {needed.shown} (its settings page › Permissions & events › {needed.scope.value}); {accepts}",
        )
    if events:
        yield Check(
            Mark.WARNING,
            f"{subject} events",
            f"not sent {', '.join(events)} (polling does without them)",
            f"tick them on the App's settings page › Permissions & events › Subscribe to events; {accepts}",
        )
