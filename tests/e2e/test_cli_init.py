"""`init` writes a setup ready for production: Claude Code kept at its version, its key passed by
name, its permission mode chosen; a file of its own (`--path`) gets a state folder and tmux server
of its own."""

from __future__ import annotations

import subprocess
from pathlib import Path

from app.config.loader import load
from tests.e2e.cli import on_a_terminal, run_cli

WATCH = ("--repo", "acme/widgets", "--user", "alice")
SECRET = "sk-ant-api03-" + "s" * 60 + "K" * 20


def init(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    cwd.mkdir(parents=True, exist_ok=True)
    return run_cli(cwd, "init", *WATCH, *args, env={"XDG_CONFIG_HOME": str(cwd / "xdg"), **(env or {})})


def test_init_for_claude_turns_the_autoupdater_off_and_passes_the_api_key_by_name(tmp_path: Path) -> None:
    target = tmp_path / "loop.yaml"
    result = init(tmp_path, "--harness", "claude", "--path", str(target), env={"ANTHROPIC_API_KEY": SECRET})
    assert result.returncode == 0, result.stderr
    spec = load(str(target)).settings.harness_spec("claude")
    assert dict(spec.env) == {"DISABLE_AUTOUPDATER": "1"}
    assert spec.pass_env == ("ANTHROPIC_API_KEY",)
    text = target.read_text(encoding="utf-8")
    assert SECRET not in text and SECRET[-20:] not in text and "sk-ant" not in text


def test_init_for_claude_with_an_account_login_passes_no_key(tmp_path: Path) -> None:
    target = tmp_path / "loop.yaml"
    result = init(tmp_path, "--harness", "claude", "--claude-login", "account", "--path", str(target))
    assert result.returncode == 0, result.stderr
    spec = load(str(target)).settings.harness_spec("claude")
    assert (dict(spec.env), spec.pass_env) == ({"DISABLE_AUTOUPDATER": "1"}, ())


def test_init_for_claude_writes_the_api_base_url_when_given(tmp_path: Path) -> None:
    target = tmp_path / "loop.yaml"
    url = "https://llm-gateway.example.com/anthropic"
    result = init(tmp_path, "--harness", "claude", "--api-base-url", url, "--path", str(target))
    assert result.returncode == 0, result.stderr
    spec = load(str(target)).settings.harness_spec("claude")
    assert dict(spec.env) == {"DISABLE_AUTOUPDATER": "1", "ANTHROPIC_BASE_URL": url}


def test_init_for_claude_states_the_permission_mode_chosen_or_the_built_in_auto(tmp_path: Path) -> None:
    chosen, built_in = tmp_path / "chosen.yaml", tmp_path / "built-in.yaml"
    assert init(tmp_path, "--harness", "claude", "--permission-mode", "default", "--path", str(chosen)).returncode == 0
    assert init(tmp_path, "--harness", "claude", "--path", str(built_in)).returncode == 0
    assert "--permission-mode default" in " ".join(load(str(chosen)).settings.harness_spec("claude").args)
    assert "permissionMode: auto" in built_in.read_text(encoding="utf-8")


def test_init_refuses_a_permission_mode_claude_code_does_not_know(tmp_path: Path) -> None:
    result = init(tmp_path, "--harness", "claude", "--permission-mode", "yolo", "--path", str(tmp_path / "x.yaml"))
    assert result.returncode == 2
    assert "--permission-mode" in result.stderr and "auto" in result.stderr
    assert not (tmp_path / "x.yaml").exists()


def test_init_on_a_terminal_asks_for_the_permission_mode_explaining_default_and_auto(tmp_path: Path) -> None:
    target = tmp_path / "loop.yaml"
    returncode, text = on_a_terminal(
        tmp_path, "init", *WATCH, "--label", "agent", "--harness", "claude", "--path", str(target),
        typed=b"default\n\n\n",  # the mode, then the login's and the base URL's defaults
    )  # fmt: skip
    assert returncode == 0, text
    assert "permission mode" in text and "default: " in text and "auto: " in text
    assert "--permission-mode default" in " ".join(load(str(target)).settings.harness_spec("claude").args)


def test_two_inits_in_two_folders_share_no_state_folder_and_no_tmux_server(tmp_path: Path) -> None:
    one, two = tmp_path / "one" / "loop.yaml", tmp_path / "two" / "loop.yaml"
    for target in (one, two):
        assert init(tmp_path, "--path", str(target)).returncode == 0
    first, second = load(str(one)).settings, load(str(two)).settings
    assert first.state_root.is_absolute() and first.state_root.is_relative_to(one.parent)
    assert first.state_root != second.state_root
    assert first.tmux_socket and second.tmux_socket and first.tmux_socket != second.tmux_socket


def test_the_last_line_of_init_names_the_file_it_wrote_whole(tmp_path: Path) -> None:
    result = init(tmp_path, "--path", "conf/loop.yaml")
    assert result.returncode == 0, result.stderr
    written = tmp_path / "conf" / "loop.yaml"
    assert written.is_file()
    assert result.stdout.splitlines()[-1].startswith(f"wrote {written}: ")
