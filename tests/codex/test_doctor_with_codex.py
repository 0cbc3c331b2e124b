"""`doctor` on the real pinned Codex, found and run with the environment its panes get —
its version read as Codex prints it, its sign-in (`codex login --with-api-key`) read from its files
offline, and the trust writer where the panes' Codex reads."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from adapters.agents.pins import PINNED_CODEX
from adapters.doctor_probe import ShDoctorProbe
from app.cli.doctor import Mark, diagnose
from app.config.settings import Settings
from tests.codex.rig import codex_binary

__all__ = ["codex_binary"]

pytestmark = pytest.mark.codex


def test_doctor_reads_the_real_codexs_version_and_its_sign_in_with_the_panes_environment(
    codex_binary: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    pane = {"PATH": f"{codex_binary.parent}:/usr/bin:/bin", "HOME": str(home)}
    document = {
        "polling": {"sources": [{"provider": "sandbox", "repos": ["sandbox/demo"], "label": "loop"}]},
        "routing": {"defaultHarness": "codex"},
    }

    def codex_lines() -> list[str]:
        found = diagnose(Settings(**document), origin="loop.yaml", probe=ShDoctorProbe(), environ=pane)
        return [c.line() for c in found if c.subject.startswith("harness codex")]

    before = codex_lines()
    assert before[0] == f"✓ harness codex: codex-cli {PINNED_CODEX} ({codex_binary})"
    assert before[1].startswith(f"✗ harness codex login: not signed in: no {home}/.codex/auth.json")

    key = "sk-doctor-" + "k" * 30
    subprocess.run(
        [str(codex_binary), "login", "--with-api-key"], input=key, text=True, env=pane, check=True, timeout=60,
        capture_output=True,
    )  # fmt: skip

    after = codex_lines()
    assert after == [
        f"✓ harness codex: codex-cli {PINNED_CODEX} ({codex_binary})",
        f"✓ harness codex login: an API key ({home}/.codex/auth.json)",
        f"✓ harness codex trust: {home}/.codex/config.toml will be created",
    ]
    assert not any(key[-12:] in line for line in after)
    assert Mark.FAILED.value not in "".join(line[0] for line in after)
