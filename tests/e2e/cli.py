"""Running the real CLI as a subprocess in a directory of its own."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without any THE_LOOP_ variable or user configuration, the project importable."""
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("THE_LOOP_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    # the operator's own ~/.config/the-loop/cli-config.yaml is never read by a test unless it says so
    env["XDG_CONFIG_HOME"] = str(ROOT / "tests" / "e2e" / "no-user-config")
    # the settings snapshots the commands save (app.config.snapshot) stay out of the operator's ~/.cache
    env["XDG_CACHE_HOME"] = os.path.join(tempfile.gettempdir(), f"the-loop-test-cache-{os.getuid()}")
    return {**env, **(extra or {})}


def run_cli(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=cwd,
        env=clean_env(env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def tree(root: Path) -> list[str]:
    """Every path under `root`, relative: what a command left on disk."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def on_a_terminal(cwd: Path, *args: str, typed: bytes, env: Mapping[str, str] | None = None) -> tuple[int, str]:
    """`python -m app ARGS` with its stdin and stdout on a terminal that holds `typed` (typed ahead,
    as a person would answer its questions): its exit code and everything the terminal showed."""
    master, slave = pty.openpty()
    os.write(master, typed)
    with subprocess.Popen(
        [sys.executable, "-m", "app", *args], cwd=cwd, env=dict(env) if env is not None else clean_env(),
        stdin=slave, stdout=slave, stderr=subprocess.PIPE,
    ) as process:  # fmt: skip
        os.close(slave)
        shown = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the terminal's other end closed: the command has gone
                break
            if not chunk:
                break
            shown += chunk
        process.wait(timeout=120)
    os.close(master)
    return process.returncode, shown.decode(errors="replace")


def bench_json(module: str, *args: str, timeout: float = 400) -> dict[str, object]:
    """`python -m MODULE --quick --json ARGS` from the project's root: the figures it printed (a
    non-zero exit fails, with its last words)."""
    result = subprocess.run(
        [sys.executable, "-m", module, "--quick", "--json", *args],
        cwd=ROOT,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return dict(json.loads(result.stdout))
