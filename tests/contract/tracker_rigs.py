"""The tracker contract's fixture: one rig per TrackerPort (the fake, the sandbox, gh on the stand-in)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.contract.sandbox_rig import SandboxRig
from tests.github_standin.rigs import BOT, FakeRig, GhRig, Rig


@pytest.fixture(params=["fake", "sandbox", pytest.param("gh", marks=pytest.mark.gh)])
def rig(request: pytest.FixtureRequest, tmp_path: Path) -> Rig:
    if request.param == "fake":
        return FakeRig()
    if request.param == "sandbox":
        return SandboxRig(tmp_path / "sandbox.sqlite3", login=BOT)
    return GhRig(request.getfixturevalue("standin"))
