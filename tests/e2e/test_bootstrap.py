"""`scripts/bootstrap.sh`: what it installs into `.venv`, and when it does not install again.

The script runs for real in a copy of the project; Python's venv and pip are stand-ins that write
down how they were called (a real install needs a package index), and so are the distribution's
tools (already present: nothing to install from the distribution).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.e2e.cli import ROOT

FAKE_PYTHON = """\
#!/bin/sh
# a stand-in interpreter: the version check passes, `-m venv` makes a venv whose pip logs its argv
case "$1" in
  -c) exit 0 ;;
  -m)
    mkdir -p .venv/bin
    printf '#!/bin/sh\\nexit 0\\n' > .venv/bin/python
    printf '#!/bin/sh\\necho "$*" >> "$PIP_LOG"\\n' > .venv/bin/pip
    chmod +x .venv/bin/python .venv/bin/pip ;;
  *) exit 0 ;;
esac
"""
TOOLS = ("tmux", "gh", "git", "openssl", "mkfs.ext4", "chattr", "npm", "apt-get", "sudo")


def project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A copy of what bootstrap reads, and an environment whose python and tools are stand-ins."""
    repo, bin_dir = tmp_path / "repo", tmp_path / "bin"
    (repo / "scripts").mkdir(parents=True)
    bin_dir.mkdir()
    installers = [path.relative_to(ROOT) for path in (ROOT / "scripts").glob("install_*.py")]
    for name in ("scripts/bootstrap.sh", "scripts/pinned_npm.py", "pyproject.toml", *installers):
        shutil.copy2(ROOT / name, repo / name)
    (bin_dir / "python").write_text(FAKE_PYTHON, encoding="utf-8")
    for tool in TOOLS:
        (bin_dir / tool).write_text(f'#!/bin/sh\necho "{tool} $*" >> "$PIP_LOG.apt"\n', encoding="utf-8")
    for script in bin_dir.iterdir():
        script.chmod(0o755)
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "PYTHON": str(bin_dir / "python"),
        "PIP_LOG": str(tmp_path / "pip.log"),
        "HOME": str(tmp_path),
    }
    return repo, env


def bootstrap(repo: Path, env: dict[str, str], *args: str) -> list[str]:
    """Run it; the pip calls it made."""
    log = Path(env["PIP_LOG"])
    before = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    done = subprocess.run(
        [str(repo / "scripts" / "bootstrap.sh"), *args],
        env={**os.environ, **env}, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    after = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return after[len(before) :]


def test_the_runtime_install_is_the_project_alone_and_tests_add_the_dev_extras(tmp_path: Path) -> None:
    repo, env = project(tmp_path)
    runtime, dev = "install -q --disable-pip-version-check -e .", "install -q --disable-pip-version-check -e .[dev]"
    assert bootstrap(repo, env) == [runtime]
    assert bootstrap(repo, env) == []  # done already
    assert bootstrap(repo, env, "--tests") == [dev]  # a runtime install is upgraded when tests are asked for
    assert bootstrap(repo, env) == []  # the dev install holds the runtime too
    assert bootstrap(repo, env, "--tests") == []  # and is not redone
    (repo / "pyproject.toml").write_text((repo / "pyproject.toml").read_text() + "\n", encoding="utf-8")
    assert bootstrap(repo, env) == [dev]  # a changed project is installed again, dev tools kept


def test_a_venv_stamped_before_the_split_counts_as_a_dev_install(tmp_path: Path) -> None:
    repo, env = project(tmp_path)
    assert bootstrap(repo, env, "--tests") != []
    stamp = repo / ".venv" / ".the-loop-installed"
    stamp.write_text(stamp.read_text().split()[0] + "\n", encoding="utf-8")  # the old stamp: the hash alone
    assert (bootstrap(repo, env, "--tests"), bootstrap(repo, env)) == ([], [])
