"""`init --app` writes the GitHub App's settings that `doctor` and `poll` load, refusing a key they
would refuse, says what to select on GitHub, and writes a manifest to register the App from."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from adapters.clock import SystemClock
from app.config.loader import load
from domain.github_app import EVENTS, PERMISSIONS
from tests.e2e.cli import run_cli
from tests.github_standin import StandIn
from tests.github_standin.app_rig import APP_ID, AppKeyFile, app_key, app_mode
from tests.github_standin.rigs import standin

__all__ = ["app_key", "standin"]  # fixtures, imported to be used here

WATCH = ("--repo", "acme/widgets", "--user", "alice")


def init(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    cwd.mkdir(parents=True, exist_ok=True)
    return run_cli(cwd, "init", *args, env={"XDG_CONFIG_HOME": str(cwd / "xdg"), **(env or {})})


def open_key(tmp_path: Path, app_key: AppKeyFile, mode: int) -> Path:
    key = tmp_path / "open.pem"
    key.write_bytes(app_key.path.read_bytes())
    os.chmod(key, mode)
    return key


def test_init_app_writes_the_apps_id_and_key_and_says_what_to_select_on_github(
    tmp_path: Path, app_key: AppKeyFile
) -> None:
    target = tmp_path / "loop.yaml"
    app = ("--app", "--app-id", str(APP_ID), "--private-key", str(app_key.path))

    result = init(tmp_path, *WATCH, *app, "--harness", "codex", "--path", str(target))

    assert result.returncode == 0, result.stderr
    settings = load(str(target)).settings
    assert settings.integrations.github.app is not None
    assert (settings.integrations.github.app.id, settings.integrations.github.app.private_key_file) == (
        APP_ID,
        str(app_key.path),
    )
    assert [str(source.repo) for source in settings.sources()] == ["acme/widgets"]
    for permission in PERMISSIONS:
        assert permission.shown in result.stdout
    assert ", ".join(EVENTS) in result.stdout
    assert result.stdout.splitlines()[-1].startswith(f"wrote {target}: ")


def test_init_app_adds_the_app_to_an_existing_configuration_keeping_what_it_said(
    tmp_path: Path, app_key: AppKeyFile
) -> None:
    target = tmp_path / "loop.yaml"
    assert init(tmp_path, *WATCH, "--harness", "codex", "--path", str(target)).returncode == 0
    before = target.read_text(encoding="utf-8")

    result = init(tmp_path, "--app", "--app-id", str(APP_ID), "--private-key", str(app_key.path), "--path", str(target))

    assert result.returncode == 0, result.stderr
    assert target.read_text(encoding="utf-8").startswith(before)
    settings = load(str(target)).settings
    assert settings.integrations.github.app is not None and settings.integrations.github.app.id == APP_ID
    assert [str(source.repo) for source in settings.sources()] == ["acme/widgets"]
    assert os.stat(target).st_mode & 0o777 == 0o600


@pytest.mark.gh
def test_the_configuration_init_app_writes_is_the_one_doctor_checks_the_app_with(
    tmp_path: Path, standin: StandIn, app_key: AppKeyFile
) -> None:
    app = app_mode(standin, app_key)
    app.install(7, "acme")
    standin.world.add_repo("acme/widgets")
    standin.world.now = SystemClock().now().replace(microsecond=0)  # the JWT is signed on the machine's clock
    target = tmp_path / "loop.yaml"
    made = init(
        tmp_path, *WATCH, "--harness", "codex", "--path", str(target),
        "--app", "--app-id", str(APP_ID), "--private-key", str(app_key.path),
    )  # fmt: skip
    assert made.returncode == 0, made.stderr

    on_standin = standin.gh_env(THE_LOOP_INTEGRATIONS__GITHUB__HOST=standin.host)
    result = run_cli(tmp_path, "--config", str(target), "doctor", env=on_standin)

    shown = [line for line in result.stdout.splitlines() if line.startswith(("✓ github app", "✓ inst"))]
    assert [line.split(":")[0] for line in shown] == [
        "✓ github app key",
        f"✓ github app {APP_ID}",
        "✓ installation 7 permissions",
    ], result.stdout


@pytest.mark.parametrize("existing", [False, True], ids=["new file", "existing file"])
def test_init_app_refuses_a_key_others_may_read_with_exit_2_and_writes_nothing(
    tmp_path: Path, app_key: AppKeyFile, existing: bool
) -> None:
    target = tmp_path / "loop.yaml"
    if existing:
        assert init(tmp_path, *WATCH, "--harness", "codex", "--path", str(target)).returncode == 0
    before = target.read_text(encoding="utf-8") if existing else None
    key = open_key(tmp_path, app_key, 0o644)
    manifest = tmp_path / "app.json"

    result = init(
        tmp_path, *(() if existing else WATCH), "--harness", "codex", "--path", str(target),
        "--app", "--app-id", str(APP_ID), "--private-key", str(key), "--manifest", str(manifest),
        "--homepage", "https://github.com/acme/loop",
    )  # fmt: skip

    assert result.returncode == 2, result.stderr
    assert f"--private-key: {key}:" in result.stderr and "mode is 0644" in result.stderr, result.stderr
    assert f"chmod 600 {key}" in result.stderr
    assert "PRIVATE KEY" not in result.stderr + result.stdout
    assert (target.read_text(encoding="utf-8") if target.exists() else None) == before
    assert not manifest.exists()


def test_init_app_refuses_a_file_that_holds_no_rsa_key(tmp_path: Path) -> None:
    key = tmp_path / "not-a-key.pem"
    key.write_text("hello\n", encoding="utf-8")
    os.chmod(key, 0o600)
    target = tmp_path / "loop.yaml"

    result = init(tmp_path, *WATCH, "--path", str(target), "--app", "--app-id", "5", "--private-key", str(key))

    assert result.returncode == 2 and f"--private-key: {key}: not a PEM private key" in result.stderr, result.stderr
    assert not target.exists()


def test_init_app_manifest_writes_a_manifest_github_registers_the_app_from(tmp_path: Path) -> None:
    manifest = tmp_path / "app.json"

    result = init(
        tmp_path, "--app", "--manifest", str(manifest), "--app-name", "acme-loop",
        "--homepage", "https://github.com/acme/loop", "--webhook-url", "https://loop.acme.example/webhook",
        "--redirect-url", "https://github.com/acme/loop",
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    document = json.loads(manifest.read_text(encoding="utf-8"))
    assert document == {
        "name": "acme-loop",
        "url": "https://github.com/acme/loop",
        "hook_attributes": {"url": "https://loop.acme.example/webhook", "active": True},
        "redirect_url": "https://github.com/acme/loop",
        "public": False,
        "default_permissions": {
            "issues": "write",
            "pull_requests": "write",
            "contents": "read",
            "metadata": "read",
            "members": "read",
        },
        "default_events": list(EVENTS),
    }
    assert "settings/apps/new" in result.stdout
    assert not (tmp_path / "xdg").exists()  # no configuration written: the App has no id yet


def test_init_app_manifest_without_a_webhook_asks_for_none(tmp_path: Path) -> None:
    manifest = tmp_path / "app.json"
    result = init(tmp_path, "--app", "--manifest", str(manifest), "--homepage", "https://github.com/acme/loop")
    assert result.returncode == 0, result.stderr
    document = json.loads(manifest.read_text(encoding="utf-8"))
    assert document["hook_attributes"]["active"] is False and "redirect_url" not in document
    assert document["name"] == "the-loop"


def test_init_app_needs_the_apps_id_and_key_or_a_manifest(tmp_path: Path) -> None:
    result = init(tmp_path, *WATCH, "--app", "--path", str(tmp_path / "loop.yaml"))
    assert result.returncode == 2
    assert "--app-id" in result.stderr and "--private-key" in result.stderr and "--manifest" in result.stderr
    assert not (tmp_path / "loop.yaml").exists()
