"""GitHub Copilot CLI's own check in `doctor`: its pinned version (its first line names it:
tests/copilot/test_copilot_facts.py); `--no-auto-update` in its profile keeps it there."""

from __future__ import annotations

from collections.abc import Iterator

from adapters.agents.doctor import Check, Found, HarnessDoctor, pinned_version
from adapters.agents.pins import PINNED_COPILOT

_NAME = ["GitHub", "Copilot", "CLI"]


def checks(found: Found) -> Iterator[Check]:
    words = found.version.split()  # `GitHub Copilot CLI 1.0.102.`
    version = words[3].removesuffix(".") if len(words) > 3 and words[:3] == _NAME else ""
    fix = f"install {PINNED_COPILOT} (scripts/install_copilot.py)"
    yield from pinned_version(found, version, PINNED_COPILOT, fix)


DOCTOR = HarnessDoctor(checks)
