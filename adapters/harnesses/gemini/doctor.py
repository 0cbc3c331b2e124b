"""Gemini CLI's own check in `doctor`: a sign-in chosen in its settings."""

from __future__ import annotations

from collections.abc import Iterator

from adapters.agents.agent_config import gemini_home
from adapters.agents.doctor import Check, Found, HarnessDoctor, Mark
from domain.errors import LoopError


def checks(found: Found) -> Iterator[Check]:
    yield _sign_in(found)


DOCTOR = HarnessDoctor(checks)


def _sign_in(found: Found) -> Check:
    """Gemini CLI with no sign-in chosen opens a dialog at each start, and its SessionStart
    hook still fires (pinned in tests/gemini/test_gemini_facts.py): only its settings can tell."""
    path = gemini_home(found.pane) / "settings.json"
    subject = f"{found.subject} sign-in"
    try:
        settings = found.probe.json_file(path) or {}
    except LoopError as error:  # Gemini reads comments in it too; a JSON reader may not
        return Check(Mark.WARNING, subject, str(error), f"check security.auth.selectedType in {path}")
    security = settings.get("security")
    auth = security.get("auth") if isinstance(security, dict) else None
    chosen = auth.get("selectedType") if isinstance(auth, dict) else None
    if isinstance(chosen, str) and chosen:
        return Check(Mark.OK, subject, f"{chosen} ({path})")
    return Check(
        Mark.FAILED,
        subject,
        f"none chosen in {path}: Gemini opens its authentication dialog at each start, and says it is ready "
        "while the dialog waits",
        f"run `{found.spec.binary}` once as the daemon's user (HOME={found.pane.get('HOME', '~')}) and choose one, "
        "or set security.auth.selectedType (e.g. gemini-api-key) there",
    )
