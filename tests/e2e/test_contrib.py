"""What ships beside the code: the systemd unit runs a command the CLI accepts, and the
Dockerfile runs exactly what CI runs."""

from __future__ import annotations

import configparser
import shlex
import tomllib
from pathlib import Path

from app.cli.main import build_parser
from tests.e2e.cli import ROOT


def _unit() -> configparser.ConfigParser:
    unit = configparser.ConfigParser(interpolation=None, strict=False)
    unit.optionxform = str  # type: ignore[assignment,method-assign]  # systemd keys are case-sensitive
    unit.read(ROOT / "contrib" / "the-loop.service", encoding="utf-8")
    return unit


def test_the_systemd_unit_runs_the_installed_poll_with_a_config() -> None:
    binary, *argv = shlex.split(_unit()["Service"]["ExecStart"])

    args = build_parser().parse_args(argv)

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert Path(binary).name in scripts and binary.startswith("%h/")
    assert (args.command, args.once) == ("poll", False) and args.config


def test_the_systemd_unit_stops_with_sigterm_and_restarts_only_on_failure() -> None:
    service = _unit()["Service"]

    settings = {key: service[key] for key in ("Type", "KillSignal", "KillMode", "Restart", "RestartPreventExitStatus")}

    assert settings == {
        "Type": "simple",
        "KillSignal": "SIGTERM",
        "KillMode": "process",  # the tmux server and its agents live in the unit's cgroup
        "Restart": "on-failure",
        "RestartPreventExitStatus": "2",
    }
    assert 30 <= int(service["TimeoutStopSec"]) <= 300


def test_the_dockerfile_runs_what_ci_runs_on_debian_bookworm() -> None:
    lines = [line for line in (ROOT / "Dockerfile").read_text().splitlines() if line and not line.startswith("#")]

    ignored = (ROOT / ".dockerignore").read_text().splitlines()

    assert lines[0] == "FROM python:3.11-bookworm"
    assert "RUN scripts/bootstrap.sh --tests" in lines and lines[-1] == 'CMD [".ci/run"]'
    assert "exec scripts/test.sh" in (ROOT / ".ci" / "run").read_text()
    assert ".venv/" in ignored  # the host's venv would pass bootstrap's check and break inside
