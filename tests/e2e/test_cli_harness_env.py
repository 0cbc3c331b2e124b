"""Configuration checks through the real entry point: every configuration problem at once, and `poll` refusing a
harness environment the daemon cannot give."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.cli import run_cli, tree


def test_a_bad_file_is_refused_with_every_problem_one_line_each(tmp_path: Path) -> None:
    (tmp_path / "loop.yaml").write_text(
        "polling: {intervalSeconds: soon}\nrouting: {spawnOnUnmatched: sometimes}\nbogus: 1\n", encoding="utf-8"
    )
    result = run_cli(tmp_path, "--config", "loop.yaml", "doctor")
    assert result.returncode == 2, result.stdout
    assert result.stderr.splitlines() == [
        "the-loop: loop.yaml: polling.intervalSeconds: must be a whole number (got 'soon')",
        "the-loop: loop.yaml: routing.spawnOnUnmatched: must be one of never, labeled, always (got 'sometimes')",
        "the-loop: loop.yaml: bogus: unknown key",
    ]


def test_poll_refuses_to_start_when_the_daemon_lacks_a_harness_variable(tmp_path: Path) -> None:
    (tmp_path / "loop.yaml").write_text(
        "state: {root: state}\nrouting:\n  harnesses:\n    demo:\n      env: {BASE: 'https://${PROXY_HOST}'}\n"
        "      passEnv: [LOOP_TEST_KEY]\n",
        encoding="utf-8",
    )
    result = run_cli(tmp_path, "--config", "loop.yaml", "poll", "--once", env={"PROXY_HOST": "p.example"})
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.splitlines() == [
        f"the-loop: {tmp_path / 'loop.yaml'}: routing.harnesses.demo: passEnv LOOP_TEST_KEY: not set in the "
        "daemon's environment"
    ]
    assert tree(tmp_path) == ["loop.yaml"]  # refused before anything was written
