"""Every harness's receipt channel: the receipt folders prepare Claude Code's and a plain file
harness's themselves, and each other harness's through the channel the container names for it (the
folders never import another harness's adapter)."""

from __future__ import annotations

import json
import tomllib
from fnmatch import fnmatch
from importlib.resources import files
from pathlib import Path

import pytest

from adapters.harnesses import hook_packages, registered
from adapters.harnesses.claude.hooks import SETTINGS_FILE
from adapters.harnesses.codex.hooks import arguments
from adapters.harnesses.opencode.plugin import (
    CONFIG_VARIABLE,
    NPM_RETRIES,
    PLUGIN_FILE,
    TUI_CONFIG_VARIABLE,
    TUI_PLUGIN_FILE,
    VALUES_FILE,
    receipt_channel,
)
from adapters.receipts.files import ENV_VARIABLE, FileReceipts
from app.config.settings import Settings
from app.container import Container
from domain.model import ReceiptChannel
from domain.receipts import ReceiptMode
from domain.refs import RepoRef, WorkItemRef

ITEM = WorkItemRef(RepoRef.parse("acme/widgets"), 7)


CHANNELS = [
    (ReceiptMode.HOOKS, "claude"),
    (ReceiptMode.HOOKS, "codex"),
    (ReceiptMode.HOOKS, "gemini"),
    (ReceiptMode.HOOKS, "opencode"),
    (ReceiptMode.FILE, ""),
    (ReceiptMode.NONE, ""),
]


@pytest.mark.parametrize("hooks", hook_packages())
def test_every_harness_package_with_hooks_gets_its_own_channel_from_the_containers_receipt_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hooks: str
) -> None:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "home"))
    settings = Settings.model_validate({"state": {"root": str(tmp_path / "state")}})
    receipts = Container(settings=settings).receipts()

    handed = receipts.prepare(ITEM, "s1", mode=ReceiptMode.HOOKS, hooks=hooks)

    elsewhere = receipts.folder(ITEM, "s2")
    elsewhere.mkdir(parents=True)
    own = registered()[hooks].channel(elsewhere, settings.routing.ask_wait_seconds)
    assert (handed.args or handed.env) and len(handed.args) == len(own.args) and len(handed.env) == len(own.env)


@pytest.mark.parametrize(("mode", "hooks"), CHANNELS)
def test_the_containers_receipt_folders_hand_every_harness_its_channel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: ReceiptMode, hooks: str
) -> None:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "home"))
    settings = Settings.model_validate({"state": {"root": str(tmp_path / "state")}})
    receipts = Container(settings=settings).receipts()
    folder = receipts.folder(ITEM, "s1")

    channel = receipts.prepare(ITEM, "s1", mode=mode, hooks=hooks)

    assert folder.is_dir()
    if hooks == "claude":
        assert channel == ReceiptChannel(args=("--settings", str(folder / SETTINGS_FILE)))
    elif hooks == "codex":  # its PermissionRequest hook waits `routing.askWaitSeconds`
        assert channel == ReceiptChannel(args=arguments(folder, ask_wait_seconds=settings.routing.ask_wait_seconds))
    elif hooks == "opencode":
        assert [name for name, _ in channel.env] == [CONFIG_VARIABLE, TUI_CONFIG_VARIABLE, NPM_RETRIES[0]]
        assert not channel.args
        assert json.loads(channel.env[0][1])["plugin"]
    elif hooks == "gemini" or mode is ReceiptMode.FILE:
        assert channel == ReceiptChannel(env=((ENV_VARIABLE, str(folder)),))
    else:
        assert channel == ReceiptChannel()
    installed = tmp_path / "home" / ".gemini" / "extensions" / "the-loop-receipts" / "hooks" / "hooks.json"
    assert installed.exists() is (hooks == "gemini")


def test_a_harness_mode_whose_channel_no_one_named_is_refused_never_handed_an_empty_one(tmp_path: Path) -> None:
    receipts = FileReceipts(tmp_path, channels={"opencode": lambda folder: ReceiptChannel()})

    with pytest.raises(LookupError, match="codex"):
        receipts.prepare(ITEM, "s1", mode=ReceiptMode.HOOKS, hooks="codex")
    assert receipts.prepare(ITEM, "s1", mode=ReceiptMode.HOOKS, hooks="opencode") == ReceiptChannel()


def test_an_opencode_spawns_plugins_are_the_package_files_and_what_they_are_told_is_data_beside_them(
    tmp_path: Path,
) -> None:
    # the folder and the wait are handed to the plugins as JSON they read, never written into their code
    folder = tmp_path / 'a "quoted" folder'
    folder.mkdir()
    receipt_channel(folder, ask_wait_seconds=60)

    shipped = files("adapters.harnesses.opencode").joinpath("plugins")
    assert (folder / PLUGIN_FILE).read_bytes() == shipped.joinpath("receipts.js").read_bytes()
    assert (folder / TUI_PLUGIN_FILE).read_bytes() == shipped.joinpath("tui.js").read_bytes()
    assert json.loads((folder / VALUES_FILE).read_text(encoding="utf-8")) == {
        "folder": str(folder),
        "askWaitSeconds": 60,
    }


def test_the_opencode_plugins_are_named_in_the_package_data_a_wheel_ships() -> None:
    root = Path(__file__).resolve().parents[2]
    shipped = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    patterns = shipped.get("package-data", {}).get("adapters.harnesses.opencode", [])
    plugins = [f"plugins/{p.name}" for p in files("adapters.harnesses.opencode").joinpath("plugins").iterdir()]
    assert plugins and all(any(fnmatch(p, pattern) for pattern in patterns) for p in plugins)
