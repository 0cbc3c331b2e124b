"""GitHub Copilot CLI's package: its built-in profile, the plugin a spawn is handed, and the trusted
folders it records in the user's configuration (no binary needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adapters.agents.receipt_line import hook_command
from adapters.harnesses.copilot.hooks import EVENTS, PLUGIN_FOLDER, receipt_channel
from adapters.harnesses.copilot.trust import CopilotTrust
from app.config.settings import Settings
from domain.errors import TrustError
from domain.receipts import ReceiptMode


def test_copilot_is_a_built_in_harness_started_with_the_id_the_loop_chose_and_resumed_by_it() -> None:
    spec = Settings().harness_spec("copilot")

    assert (spec.receipts, spec.hooks, spec.trust_workdir, spec.session_rules) == (
        ReceiptMode.HOOKS,
        "copilot",
        True,
        False,
    )
    assert spec.argv("c-1", resume=False) == ("copilot", "--no-auto-update", "--session-id", "c-1", "-i")
    assert spec.argv("c-1", resume=True) == ("copilot", "--no-auto-update", "--resume", "c-1", "-i")


def test_a_spawn_is_handed_a_plugin_in_its_receipt_folder_whose_hooks_write_receipts_there(tmp_path: Path) -> None:
    channel = receipt_channel(tmp_path)

    plugin = tmp_path / PLUGIN_FOLDER
    assert channel.args == ("--plugin-dir", str(plugin)) and not channel.env
    assert json.loads((plugin / "plugin.json").read_text())["name"]
    hooks = json.loads((plugin / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == set(EVENTS) and "PermissionRequest" not in hooks  # its payload is not Claude Code's
    assert {entry[0]["hooks"][0]["command"] for entry in hooks.values()} == {hook_command(tmp_path)}


def test_trusting_a_folder_adds_it_to_trusted_folders_keeping_the_comment_lines_and_every_other_key(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.json"
    config.write_text('// written by Copilot\n// do not edit\n{"model": "x", "trustedFolders": ["/a"]}\n')
    trust = CopilotTrust(config, settle_seconds=0)

    assert trust.trust(str(tmp_path / "w")) is True
    assert trust.trust(str(tmp_path / "w")) is False  # there already

    text = config.read_text()
    assert text.startswith("// written by Copilot\n// do not edit\n")
    body = json.loads("\n".join(line for line in text.splitlines() if not line.startswith("//")))
    assert body == {"model": "x", "trustedFolders": ["/a", str((tmp_path / "w").resolve())]}


@pytest.mark.parametrize("text", ["{not json", '["a list"]', '{"trustedFolders": "/a"}'])
def test_a_configuration_it_cannot_read_as_copilots_is_never_touched(tmp_path: Path, text: str) -> None:
    config = tmp_path / "config.json"
    config.write_text(text)

    with pytest.raises(TrustError, match="not touching the file"):
        CopilotTrust(config, settle_seconds=0).trust(str(tmp_path / "w"))
    assert config.read_text() == text
