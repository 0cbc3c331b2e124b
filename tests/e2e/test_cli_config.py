"""The real CLI and its configuration: a bad one is exit 2, one line naming file and key, nothing written."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import app
from tests.e2e.cli import run_cli, tree

BAD = {
    "unknown key": ("polling: {intervalSecs: 3}\n", "polling.intervalSecs: unknown key"),
    "wrong type": ("polling: {intervalSeconds: soon}\n", "polling.intervalSeconds: must be a whole number"),
    "bad enum": (
        "routing: {spawnOnUnmatched: sometimes}\n",
        "routing.spawnOnUnmatched: must be one of never, labeled, always",
    ),
    "bad repository ref": (
        "polling: {sources: [{repos: [nope], label: x}]}\n",
        "polling.sources[0].repos[0]: not a repository",
    ),
    "unreadable YAML": ("polling: [\n", "invalid YAML"),
    "top level not a mapping": ("- polling\n", "the top level must be a mapping"),
    "not UTF-8": (b"polling: {label: \xff}\n", "not UTF-8 text"),
}


def assert_refused(cwd: Path, result: subprocess.CompletedProcess[str], *expected: str) -> None:
    lines = result.stderr.splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and all(text in lines[0] for text in expected), result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert not (cwd / ".the-loop").exists()


@pytest.mark.parametrize("case", BAD)
def test_a_bad_config_exits_2_naming_the_file_and_the_key_and_writes_nothing(tmp_path: Path, case: str) -> None:
    text, expected = BAD[case]
    config = tmp_path / "loop.yaml"
    config.write_bytes(text if isinstance(text, bytes) else text.encode())
    result = run_cli(tmp_path, "--config", "loop.yaml", "status")
    assert_refused(tmp_path, result, "loop.yaml: ", expected)
    assert tree(tmp_path) == ["loop.yaml"]


def test_a_bad_config_at_the_default_path_stops_doctor_too(tmp_path: Path) -> None:
    (tmp_path / ".the-loop").mkdir()
    (tmp_path / ".the-loop" / "cli-config.yaml").write_text("routing: {bogus: 1}\n", encoding="utf-8")
    result = run_cli(tmp_path, "doctor")
    assert result.returncode == 2
    assert result.stderr.strip() == "the-loop: .the-loop/cli-config.yaml: routing.bogus: unknown key"
    assert tree(tmp_path) == [".the-loop", ".the-loop/cli-config.yaml"]


def test_a_missing_file_given_by_flag_exits_2(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "--config", "gone.yaml", "events")
    assert_refused(tmp_path, result, "gone.yaml: no such file")


def test_a_missing_file_given_by_the_variable_exits_2(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "events", env={"THE_LOOP_CLI_CONFIG": "gone.yaml"})
    assert_refused(tmp_path, result, "gone.yaml: no such file")


def test_a_bad_environment_override_names_the_variable(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "status", env={"THE_LOOP_ROUTING__MAXCONCURRENTDISPATCHES": "many"})
    assert_refused(
        tmp_path, result, "environment THE_LOOP_ROUTING__MAXCONCURRENTDISPATCHES: routing.maxConcurrentDispatches"
    )


def record(event: str, **fields: str) -> str:
    return json.dumps(
        {"ts": "2026-11-30T09:00:00+00:00", "source": "poller", "event": event, "level": "info", **fields}
    )


def test_the_environment_wins_over_the_file(tmp_path: Path) -> None:
    (tmp_path / "loop.yaml").write_text("eventLog: {path: from-file.jsonl}\n", encoding="utf-8")
    (tmp_path / "from-file.jsonl").write_text(record("poll.cycle") + "\n", encoding="utf-8")
    (tmp_path / "from-env.jsonl").write_text(record("poller.started") + "\n", encoding="utf-8")
    result = run_cli(
        tmp_path, "--config", "loop.yaml", "events", "--json", env={"THE_LOOP_EVENTLOG__PATH": "from-env.jsonl"}
    )
    assert [json.loads(line)["event"] for line in result.stdout.splitlines()] == ["poller.started"]


def test_with_no_config_the_defaults_apply_and_nothing_is_created(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "events")
    assert (result.returncode, result.stderr.strip()) == (0, "no matching events in .the-loop/logs/events.jsonl")
    assert tree(tmp_path) == []


def test_version_prints_the_version_the_ledger_records(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "--version")
    assert (result.returncode, result.stdout) == (0, f"the-loop {app.version()}\n")


def test_help_lists_every_command(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "--help")
    commands = ("poll", "status", "sessions", "events", "doctor", "demo", "sandbox", "webhook", "why")
    assert result.returncode == 0 and all(f"    {name} " in result.stdout for name in commands)


def test_a_usage_error_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "sessions", "attach", "--work-item", "owner#1")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "the-loop: sessions attach: argument --work-item: not a work item 'owner#1': expected "
        "'github:owner/repo#N', 'owner/repo#N', '#N' or the item's URL (https://HOST/OWNER/REPO/issues/N) "
        "(see the-loop sessions attach --help)"
    ]


def test_no_command_prints_help_and_exits_2(tmp_path: Path) -> None:
    result = run_cli(tmp_path)
    assert result.returncode == 2 and result.stderr.startswith("usage: the-loop")
