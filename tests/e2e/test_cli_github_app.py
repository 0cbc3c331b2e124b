"""The CLI acting as a GitHub App: its key refused at start unless its owner alone can read it, and
`poll --once` reading and writing GitHub with installation tokens."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from adapters.clock import SystemClock
from tests.e2e.cli import run_cli
from tests.e2e.loop_rig import Loop, loop
from tests.github_standin import StandIn
from tests.github_standin.app_rig import APP_ID, AppKeyFile, app_key, app_mode
from tests.github_standin.rigs import standin
from tests.tmux_support import real_tmux

__all__ = ["app_key", "loop", "real_tmux", "standin"]  # fixtures, imported to be used here

REPO = "acme/widgets"


def app_config(directory: Path, key: Path, **github: object) -> Path:
    document = {
        "polling": {"sources": [{"repos": [REPO], "label": "loop"}]},
        "integrations": {"github": {"app": {"id": APP_ID, "privateKeyFile": str(key)}, **github}},
    }
    path = directory / "loop.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


@pytest.mark.parametrize("mode", [0o644, 0o640])
def test_poll_refuses_to_start_with_a_key_others_may_read_naming_the_file(
    tmp_path: Path, app_key: AppKeyFile, mode: int
) -> None:
    key = tmp_path / "app.pem"
    key.write_bytes(app_key.path.read_bytes())
    os.chmod(key, mode)

    result = run_cli(tmp_path, "--config", str(app_config(tmp_path, key)), "poll", "--once")

    assert result.returncode == 2, result.stderr
    assert f"integrations.github.app.privateKeyFile: {key}:" in result.stderr
    assert f"mode is {mode:04o}" in result.stderr and "chmod 600" in result.stderr
    assert "PRIVATE KEY" not in result.stderr + result.stdout


def test_poll_refuses_to_start_without_its_key_file(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "--config", str(app_config(tmp_path, tmp_path / "gone.pem")), "poll", "--once")
    assert result.returncode == 2 and f"{tmp_path / 'gone.pem'}: no such file" in result.stderr, result.stderr


@pytest.mark.gh
def test_poll_once_as_the_app_reads_and_reacts_with_installation_tokens(
    loop: Loop, standin: StandIn, app_key: AppKeyFile
) -> None:
    app = app_mode(standin, app_key)
    app.install(7, "acme")
    world = standin.world
    world.now = SystemClock().now().replace(microsecond=0)  # the JWT is signed on the machine's clock
    world.add_issue(REPO, 1, author="bob")  # by nobody authorized: nothing spawns
    loop.sources = [{"provider": "github", "repos": [REPO], "label": "loop"}]
    loop.extra = {
        "integrations": {"github": {"host": standin.host, "app": {"id": APP_ID, "privateKeyFile": str(app_key.path)}}}
    }

    result = run_cli(
        loop.root, "--config", str(loop.write_config()), "poll", "--once", env=loop.tmux.env | standin.gh_env()
    )

    assert result.returncode == 0, result.stderr
    # the operator's token is in gh's environment too: the stand-in in App mode refuses it
    assert (len(app.exchanges_of(7)), app.refused) == (1, 0)
    assert any(path.startswith(f"/repos/{REPO}/issues") and status == 200 for _, path, status in world.log)


@pytest.mark.gh
def test_status_shows_each_installation_s_budget_after_poll_once_as_the_app(
    loop: Loop, standin: StandIn, app_key: AppKeyFile
) -> None:
    app = app_mode(standin, app_key)
    app.install(7, "acme").rate_remaining = 900
    app.install(9, "globex").rate_remaining = 4200
    world = standin.world
    world.now = SystemClock().now().replace(microsecond=0)  # the JWT is signed on the machine's clock
    for name in (REPO, "globex/gadgets"):
        world.add_issue(name, 1, author="bob")
    loop.sources = [{"provider": "github", "repos": [REPO, "globex/gadgets"], "label": "loop"}]
    loop.extra = {
        "integrations": {"github": {"host": standin.host, "app": {"id": APP_ID, "privateKeyFile": str(app_key.path)}}}
    }
    config, env = str(loop.write_config()), loop.tmux.env | standin.gh_env()

    polled = run_cli(loop.root, "--config", config, "poll", "--once", env=env)
    shown = run_cli(loop.root, "--config", config, "status", env=env)
    as_json = json.loads(run_cli(loop.root, "--config", config, "status", "--json", env=env).stdout)

    assert polled.returncode == 0, polled.stderr
    left = {n: app.installations[n].rate_remaining for n in (7, 9)}  # what the stand-in counted for each
    assert left[7] < 900 and left[9] < 4200
    said = as_json["installation_budgets"]
    assert [{k: v for k, v in entry.items() if k != "reset"} for entry in said] == [
        {"host": standin.host, "installation": 7, "owners": ["acme"], "remaining": left[7], "limit": 5000},
        {"host": standin.host, "installation": 9, "owners": ["globex"], "remaining": left[9], "limit": 5000},
    ]
    # an hour past GitHub's Date, on the machine's clock (the reply's Date is a second coarse)
    assert all(entry["reset"] == pytest.approx(world.now.timestamp() + 3600, abs=60) for entry in said)
    assert as_json["budgets"] == {}  # the token's, by host: personal mode only
    assert [line.split(" left")[0] for line in shown.stdout.splitlines() if line.startswith("GitHub budget")] == [
        f"GitHub budget: installation 7 (acme): {left[7]} of 5,000",
        f"GitHub budget: installation 9 (globex): {left[9]:,} of 5,000",
    ], shown.stdout


def test_doctor_fails_a_key_others_may_read_and_asks_github_nothing(tmp_path: Path, app_key: AppKeyFile) -> None:
    key = tmp_path / "app.pem"
    key.write_bytes(app_key.path.read_bytes())
    os.chmod(key, 0o644)

    result = run_cli(tmp_path, "--config", str(app_config(tmp_path, key)), "doctor")

    assert result.returncode == 1
    [line] = [line for line in result.stdout.splitlines() if "github app" in line]
    assert line.startswith(f"✗ github app key: {key}: ") and f"fix: chmod 600 {key}" in line, line
    assert "gh auth" not in result.stdout


@pytest.mark.gh
def test_doctor_passes_a_ready_app_key_jwt_and_installation(
    tmp_path: Path, standin: StandIn, app_key: AppKeyFile
) -> None:
    app = app_mode(standin, app_key)
    app.install(7, "acme")
    standin.world.add_repo(REPO)
    standin.world.now = SystemClock().now().replace(microsecond=0)  # the JWT is signed on the machine's clock

    config = app_config(tmp_path, app_key.path, host=standin.host)
    result = run_cli(tmp_path, "--config", str(config), "doctor", env=standin.gh_env())

    shown = [line for line in result.stdout.splitlines() if line.startswith(("✓ github app", "✓ repository", "✓ inst"))]
    assert shown == [
        f"✓ github app key: {app_key.path}: an RSA key of 2048 bits, its owner's alone",
        f"✓ github app {APP_ID}: GitHub takes its JWT: the-loop-bot (app {APP_ID}), writing as the-loop-bot[bot]",
        f"✓ repository {standin.host}/{REPO}: installation 7: its token reads {REPO}",
        "✓ installation 7 permissions: Issues: Read and write, Pull requests: Read and write, Contents: Read-only,"
        " Metadata: Read-only, Members: Read-only; every event (acme)",
    ], result.stdout
