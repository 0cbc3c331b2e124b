"""opencode's own check in `doctor`: its pinned version (it prints only the version:
tests/opencode/test_opencode_facts.py)."""

from __future__ import annotations

from collections.abc import Iterator

from adapters.agents.doctor import Check, Found, HarnessDoctor, pinned_version
from adapters.agents.pins import PINNED_OPENCODE


def checks(found: Found) -> Iterator[Check]:
    words = found.version.split()  # `1.18.33`
    fix = f"install {PINNED_OPENCODE} (scripts/install_opencode.py)"
    yield from pinned_version(found, words[0] if words else "", PINNED_OPENCODE, fix)


DOCTOR = HarnessDoctor(checks)
