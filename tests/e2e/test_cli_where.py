"""Which configuration and state a command used, `init`, and short refs."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from app.config.loader import load
from tests.e2e.cli import clean_env, on_a_terminal, run_cli, tree

RECORD = {"ts": "2026-11-30T09:00:00+00:00", "source": "poller", "level": "info"}


def user_config(tmp_path: Path, text: str) -> tuple[Path, dict[str, str]]:
    """A file at `$XDG_CONFIG_HOME/the-loop/cli-config.yaml`, and the environment naming that home."""
    path = tmp_path / "xdg" / "the-loop" / "cli-config.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return path, {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}


def elsewhere(tmp_path: Path) -> Path:
    work = tmp_path / "elsewhere"
    work.mkdir()
    return work


def on_terminal(cwd: Path, *args: str, env: dict[str, str]) -> tuple[int, str]:
    """The CLI with its stdout on a pseudo-terminal, as an operator runs it: status and what it showed."""
    master, slave = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-m", "app", *args], cwd=cwd, env=clean_env(env),
        stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.PIPE,
    ) as process:  # fmt: skip
        os.close(slave)
        shown = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            shown += chunk
        process.wait(timeout=120)
    os.close(master)
    return process.returncode, shown.decode().replace("\r\n", "\n")


# -- which configuration, which state --------------------------------------------------------------


def test_the_file_at_the_xdg_config_path_is_read_from_any_directory(tmp_path: Path) -> None:
    path, env = user_config(tmp_path, f"state: {{root: {tmp_path / 'state'}}}\npolling: {{intervalSeconds: 7}}\n")
    result = run_cli(elsewhere(tmp_path), "status", "--json", env=env)
    shown = json.loads(result.stdout)
    assert (shown["config"], shown["state_root"], shown["interval_seconds"]) == (
        str(path),
        str(tmp_path / "state"),
        7,
    )
    assert result.returncode == 3  # not running, read from the right state


def test_without_xdg_config_home_the_file_under_home_dot_config_is_read(tmp_path: Path) -> None:
    path = tmp_path / "home" / ".config" / "the-loop" / "cli-config.yaml"
    path.parent.mkdir(parents=True)
    path.write_text("polling: {intervalSeconds: 8}\n", encoding="utf-8")
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": ""}  # empty: as if unset
    shown = json.loads(run_cli(elsewhere(tmp_path), "status", "--json", env=env).stdout)
    assert (shown["config"], shown["interval_seconds"]) == (str(path), 8)


def test_the_working_directory_file_wins_over_the_xdg_one(tmp_path: Path) -> None:
    _, env = user_config(tmp_path, "polling: {intervalSeconds: 7}\n")
    work = elsewhere(tmp_path)
    (work / ".the-loop").mkdir()
    (work / ".the-loop" / "cli-config.yaml").write_text("polling: {intervalSeconds: 9}\n", encoding="utf-8")
    shown = json.loads(run_cli(work, "status", "--json", env=env).stdout)
    assert (shown["config"], shown["state_root"], shown["interval_seconds"]) == (
        str(work / ".the-loop" / "cli-config.yaml"),
        str(work / ".the-loop"),
        9,
    )


def test_with_no_file_the_json_says_the_built_in_demo_configuration(tmp_path: Path) -> None:
    work = elsewhere(tmp_path)
    shown = json.loads(run_cli(work, "status", "--json", env={"XDG_CONFIG_HOME": str(tmp_path / "none")}).stdout)
    assert (shown["config"], shown["state_root"]) == (None, str(work / ".the-loop"))


def test_doctor_names_the_file_it_checked(tmp_path: Path) -> None:
    path, env = user_config(tmp_path, f"state: {{root: {tmp_path / 'state'}}}\n")
    result = run_cli(elsewhere(tmp_path), "doctor", env={**env, "PATH": str(tmp_path)})  # no tmux: fails later
    assert result.stdout.splitlines()[0] == f"✓ config: valid ({path})"


def test_on_a_terminal_a_command_first_says_which_config_and_state_piped_it_does_not(
    tmp_path: Path,
) -> None:
    path, env = user_config(tmp_path, f"state: {{root: {tmp_path / 'state'}}}\n")
    work = elsewhere(tmp_path)
    status, shown = on_terminal(work, "sessions", "list", env=env)
    assert status == 0
    assert shown.splitlines()[0] == f"config: {path} · state: {tmp_path / 'state'}"
    assert run_cli(work, "sessions", "list", env=env).stdout == ""  # piped: nothing but the listing


def test_on_a_terminal_with_no_file_the_header_says_built_in_demo_configuration(
    tmp_path: Path,
) -> None:
    work = elsewhere(tmp_path)
    status, shown = on_terminal(work, "status", env={"XDG_CONFIG_HOME": str(tmp_path / "none")})
    assert status == 3
    assert shown.splitlines()[0] == f"config: none, the built-in demo configuration · state: {work / '.the-loop'}"
    assert tree(work) == []


def init(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(elsewhere(tmp_path), "init", *args, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), **(env or {})})


STARTER = ("--repo", "acme/widgets", "--repo", "acme/gadgets", "--label", "agent", "--user", "alice")


def test_init_writes_a_commented_starter_at_the_xdg_path_that_loads_cleanly(tmp_path: Path) -> None:
    result = init(tmp_path, *STARTER, "--user", "bob", "--harness", "codex")
    path = tmp_path / "xdg" / "the-loop" / "cli-config.yaml"
    assert result.returncode == 0, result.stderr
    assert str(path) in result.stdout
    text = path.read_text(encoding="utf-8")
    assert text.startswith("#") and "docs/config.md" in text
    settings = load(str(path)).settings
    assert [(str(s.repo), s.label) for s in settings.sources()] == [
        ("acme/widgets", "agent"),
        ("acme/gadgets", "agent"),
    ]
    assert (settings.routing.authorized_users, settings.routing.default_harness) == (("alice", "bob"), "codex")
    assert settings.state_root.is_absolute()  # the same state whichever directory a command runs in
    # and every command now reads it, from any directory
    shown = json.loads(run_cli(tmp_path, "status", "--json", env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")}).stdout)
    assert shown["config"] == str(path)


def test_init_writes_a_file_only_its_owner_reads_whatever_the_umask(tmp_path: Path) -> None:
    # the file is where the webhook secret and a DSN go later: other local users never read it
    old = os.umask(0o022)  # the child inherits it
    try:
        result = init(tmp_path, *STARTER, "--harness", "claude")
    finally:
        os.umask(old)
    path = tmp_path / "xdg" / "the-loop" / "cli-config.yaml"
    assert result.returncode == 0, result.stderr
    assert path.stat().st_mode & 0o077 == 0, oct(path.stat().st_mode)


def test_init_refuses_to_overwrite_naming_the_file(tmp_path: Path) -> None:
    target = tmp_path / "mine.yaml"
    target.write_text("polling: {intervalSeconds: 3}\n", encoding="utf-8")
    result = init(tmp_path, *STARTER, "--path", str(target))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"the-loop: init: {target} exists already; not overwritten"]
    assert target.read_text(encoding="utf-8") == "polling: {intervalSeconds: 3}\n"


def test_init_writes_where_path_says(tmp_path: Path) -> None:
    target = tmp_path / "conf" / "loop.yaml"
    result = init(tmp_path, *STARTER, "--harness", "claude", "--path", str(target))
    assert result.returncode == 0, result.stderr
    assert load(str(target)).settings.routing.default_harness == "claude"
    assert not (tmp_path / "xdg").exists()


def test_init_with_no_terminal_and_no_flags_says_which_are_needed(tmp_path: Path) -> None:
    result = init(tmp_path)
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert "--repo" in line and "--user" in line and "no terminal" in line
    assert not (tmp_path / "xdg").exists()


def test_init_on_a_terminal_asks_for_what_the_flags_leave_out(tmp_path: Path) -> None:
    env = clean_env({"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    returncode, shown = on_a_terminal(
        elsewhere(tmp_path), "init", "--label", "agent", "--harness", "codex", env=env,
        typed=b"acme/widgets acme/gadgets\nalice\n",  # typed ahead: the terminal holds it
    )  # fmt: skip
    assert returncode == 0, shown
    assert "repositories to watch" in shown and "whose comments become prompts" in shown
    settings = load(str(tmp_path / "xdg" / "the-loop" / "cli-config.yaml")).settings
    assert [str(s.repo) for s in settings.sources()] == ["acme/widgets", "acme/gadgets"]
    assert (settings.routing.authorized_users, settings.routing.default_harness) == (("alice",), "codex")


def test_init_refuses_an_unknown_harness_listing_the_known(tmp_path: Path) -> None:
    result = init(tmp_path, *STARTER, "--harness", "nope")
    assert result.returncode == 2
    assert "unknown harness 'nope'" in result.stderr and "claude" in result.stderr
    assert not (tmp_path / "xdg").exists()


# -- short work-item references --------------------------------------------------------------------

HOST = "localhost:40695"


def watched(tmp_path: Path, *repos: str) -> tuple[Path, dict[str, str]]:
    """A configuration watching `repos` on the GitHub host, and an event log of items 1 and 2."""
    log = tmp_path / "events.jsonl"
    log.write_text(
        "".join(
            json.dumps({**RECORD, "event": "poll.comment_seen", "work_item": f"github:{HOST}/{repo}#{n}"}) + "\n"
            for repo in repos
            for n in (1, 2)
        ),
        encoding="utf-8",
    )
    config = (
        f"integrations: {{github: {{host: '{HOST}'}}}}\n"
        f"polling: {{sources: [{{repos: [{', '.join(repos)}], label: agent}}]}}\n"
        f"eventLog: {{path: {log}}}\n"
    )
    return user_config(tmp_path, config)


def items_shown(cwd: Path, ref: str, env: dict[str, str]) -> list[str]:
    result = run_cli(cwd, "events", "--json", "--work-item", ref, env=env)
    assert result.returncode == 0, result.stderr
    return [json.loads(line)["work_item"] for line in result.stdout.splitlines()]


def test_a_short_ref_a_url_and_the_full_form_name_the_same_item(tmp_path: Path) -> None:
    _, env = watched(tmp_path, "acme/widgets")
    work = elsewhere(tmp_path)
    full = f"github:{HOST}/acme/widgets#1"
    for ref in (
        "#1",
        "acme/widgets#1",
        f"https://{HOST}/acme/widgets/issues/1",
        f"https://{HOST}/acme/widgets/pull/1",
        full,
    ):
        assert items_shown(work, ref, env) == [full], ref


def test_a_bare_number_with_two_watched_repositories_is_refused_listing_the_candidates(
    tmp_path: Path,
) -> None:
    _, env = watched(tmp_path, "acme/widgets", "acme/gadgets")
    result = run_cli(elsewhere(tmp_path), "sessions", "close", "--work-item", "#1", env=env)
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert f"github:{HOST}/acme/widgets#1" in line and f"github:{HOST}/acme/gadgets#1" in line
    assert "ambiguous" in line


def test_the_short_form_works_wherever_a_work_item_is_asked_for(tmp_path: Path) -> None:
    _, env = watched(tmp_path, "acme/widgets")
    result = run_cli(elsewhere(tmp_path), "sessions", "reopen", "--work-item", "acme/widgets#3", env=env)
    assert result.returncode == 1
    assert f"github:{HOST}/acme/widgets#3" in result.stderr  # resolved, then unknown to the state store


def test_a_repeated_work_item_option_resolves_each(tmp_path: Path) -> None:
    _, env = watched(tmp_path, "acme/widgets")
    result = run_cli(elsewhere(tmp_path), "sessions", "reset", "--work-item", "#4", "--work-item", "#5", env=env)
    assert result.returncode == 1
    assert f"unknown work item github:{HOST}/acme/widgets#4" in result.stderr
