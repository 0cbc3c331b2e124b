"""The validated-settings snapshot the read-only commands start from is used only
for exactly the input it was made from, is private, and keeps no secret."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from app.config import snapshot
from app.config.loader import load

CONFIG = """\
state: {root: ./state}
polling:
  intervalSeconds: 90
  sources: [{provider: github, repos: [acme/widgets, acme/tools], label: loop}]
webhooks: {ghWebhook: {enabled: true, secret: webhook-secret-4711}}
routing:
  authorizedUsers: [alice]
  harnesses: {claude: {env: {API_TOKEN: harness-secret-0815}}}
"""


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.chdir(tmp_path)
    for name in [name for name in os.environ if name.upper().startswith("THE_LOOP_")]:
        monkeypatch.delenv(name)
    Path("c.yaml").write_text(CONFIG, encoding="utf-8")
    return {"HOME": str(tmp_path / "home"), "XDG_CACHE_HOME": str(tmp_path / "cache")}


def _saved(env: dict[str, str]) -> None:
    snapshot.write(load("c.yaml"), env)


def test_a_snapshot_holds_what_the_read_only_commands_need(env: dict[str, str]) -> None:
    _saved(env)
    found = snapshot.read("c.yaml", env)
    assert found is not None
    assert (found.config_path, found.state_root, found.backend) == (str(Path("c.yaml").absolute()), "./state", "sqlite")
    assert (found.repos, found.interval_seconds, found.event_log_path) == (
        ("acme/widgets", "acme/tools"),
        90,
        Path("state/logs/events.jsonl"),
    )


def test_a_snapshot_is_private_and_keeps_no_secret(env: dict[str, str]) -> None:
    _saved(env)
    folder = Path(env["XDG_CACHE_HOME"]) / "the-loop"
    (saved,) = (folder / "snapshots").iterdir()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "snapshots").stat().st_mode) == 0o700
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    text = saved.read_text(encoding="utf-8")
    assert "webhook-secret-4711" not in text
    assert "harness-secret-0815" not in text
    assert "API_TOKEN" not in text


def test_a_changed_configuration_file_never_reads_the_old_snapshot(env: dict[str, str]) -> None:
    _saved(env)
    Path("c.yaml").write_text(CONFIG.replace("./state", "./other"), encoding="utf-8")
    assert snapshot.read("c.yaml", env) is None
    _saved(env)
    found = snapshot.read("c.yaml", env)
    assert found is not None and found.state_root == "./other"


def test_a_changed_the_loop_variable_never_reads_the_old_snapshot(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _saved(env)
    assert snapshot.read("c.yaml", {**env, "THE_LOOP_STATE__ROOT": "./elsewhere"}) is None
    assert snapshot.read("c.yaml", {**env, "OTHER": "x"}) is not None  # only THE_LOOP_* counts
    monkeypatch.setenv("THE_LOOP_STATE__ROOT", "./elsewhere")
    with_variable = {**env, "THE_LOOP_STATE__ROOT": "./elsewhere"}
    snapshot.write(load("c.yaml"), with_variable)
    found = snapshot.read("c.yaml", with_variable)
    assert found is not None and found.state_root == "./elsewhere"


def test_another_version_of_the_code_never_reads_the_old_snapshot(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _saved(env)
    monkeypatch.setattr(snapshot, "__version__", "99.0.0")
    assert snapshot.read("c.yaml", env) is None


def test_a_changed_configuration_module_never_reads_the_old_snapshot(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = tmp_path / "config-code"
    code.mkdir()
    (code / "sections.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.setattr(snapshot, "_CONFIG_CODE", code)
    _saved(env)
    assert snapshot.read("c.yaml", env) is not None
    (code / "sections.py").write_text("x = 22\n", encoding="utf-8")
    assert snapshot.read("c.yaml", env) is None


def test_another_configuration_file_or_none_has_its_own_snapshot(env: dict[str, str]) -> None:
    _saved(env)
    Path("d.yaml").write_text(CONFIG, encoding="utf-8")
    assert snapshot.read("d.yaml", env) is None
    assert snapshot.read(None, env) is None  # no file found: the built-in defaults, not c.yaml's
    assert snapshot.read("missing.yaml", env) is None


def test_a_postgres_snapshot_keeps_the_backend_but_not_the_dsn(env: dict[str, str]) -> None:
    Path("c.yaml").write_text(
        "state: {root: ./state, backend: postgres, dsn: 'postgresql://u:pw-1234@db/x'}\n", encoding="utf-8"
    )
    _saved(env)
    found = snapshot.read("c.yaml", env)
    assert found is not None and found.backend == "postgres"
    (saved,) = (Path(env["XDG_CACHE_HOME"]) / "the-loop" / "snapshots").iterdir()
    assert "pw-1234" not in saved.read_text(encoding="utf-8")
