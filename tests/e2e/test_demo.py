"""`demo` and `sandbox …` as a newcomer runs them: real processes, real tmux on a private socket."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.cli import clean_env, run_cli, tree
from tests.tmux_support import require_tmux

SOCKET = "the-loop-demo"  # the embedded default's private server
FIRST = "github:sandbox/demo#1"
HOSTILE = "run \x1b[31mred\x1b]0;owned\x07 then\r\x1b[201~typed"
BROKEN_HARNESS = """\
polling: {sources: [{provider: sandbox, repos: [sandbox/demo], label: loop}]}
routing:
  authorizedUsers: [demo]
  tmux: {socketName: the-loop-demo}
  harnesses: {demo: {args: ["-c", "print('harness broke'); raise SystemExit(3)"]}}
"""


@dataclass
class Place:
    """A working directory of its own, and a tmux socket directory no other test shares."""

    work: Path
    sockets: Path

    @property
    def env(self) -> dict[str, str]:
        return {"TMUX_TMPDIR": str(self.sockets)}

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(self.work, *args, env=self.env)

    def pane(self, session: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", SOCKET, "capture-pane", "-p", "-J", "-t", f"={session}:"],
            env=clean_env(self.env), capture_output=True, text=True, timeout=10, check=True,
        )  # fmt: skip
        return done.stdout


def sandbox(cwd: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`sandbox …` needs no tmux: the sandbox is a file under `.the-loop/`."""
    return subprocess.run(
        [sys.executable, "-m", "app", "sandbox", *args], cwd=cwd, env=clean_env(), input=stdin,
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


@pytest.fixture
def place(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Place]:
    require_tmux()
    work = tmp_path / "work"
    work.mkdir()
    here = Place(work, tmp_path_factory.mktemp("tmux"))
    try:
        yield here
    finally:
        subprocess.run(
            ["tmux", "-L", SOCKET, "kill-server"], env=clean_env(here.env), capture_output=True, timeout=10, check=False
        )


def test_the_demo_delivers_a_comment_the_pane_shows_and_says_how_to_attach(place: Place) -> None:
    # as a newcomer runs it: no PYTHONPATH, so the harness imports from the installed project
    result = run_cli(place.work, "demo", env={**place.env, "PYTHONPATH": ""})
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line.strip() for line in result.stdout.splitlines()]
    assert f"tmux -L {SOCKET} attach -r -t loop-github-sandbox-demo-1" in lines
    assert any(line.endswith(f"-m app sessions attach --work-item {FIRST} --read-only") for line in lines)
    shown = place.pane("loop-github-sandbox-demo-1")
    assert "│ Hello from the-loop demo!" in shown
    assert "↵ submitted (message 1)" in shown
    assert (place.work / ".the-loop" / "sandbox.sqlite3").exists()
    # only the private server's socket: the operator's default server was never asked anything
    assert [p.name for p in (place.sockets / f"tmux-{os.getuid()}").iterdir()] == [SOCKET]


def test_the_commands_the_demo_prints_run_as_printed(place: Place) -> None:
    printed = place.cli("demo").stdout.splitlines()
    (listing,) = [line.strip() for line in printed if line.endswith(" sandbox list")]
    done = subprocess.run(
        ["/bin/sh", "-c", listing], cwd=place.work, env=clean_env({**place.env, "PYTHONPATH": ""}),
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{FIRST}  open  [loop]  by demo")


def test_running_the_demo_again_opens_a_second_item_in_a_session_of_its_own(place: Place) -> None:
    assert place.cli("demo").returncode == 0
    again = place.cli("demo")
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"tmux -L {SOCKET} attach -r -t loop-github-sandbox-demo-2" in again.stdout
    assert "↵ submitted (message 1)" in place.pane("loop-github-sandbox-demo-2")
    assert "↵ submitted (message 1)" in place.pane("loop-github-sandbox-demo-1")


def test_after_its_state_is_deleted_the_demo_skips_the_item_number_a_live_session_still_holds(place: Place) -> None:
    assert place.cli("demo").returncode == 0
    shutil.rmtree(place.work / ".the-loop")
    again = place.cli("demo")
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"tmux -L {SOCKET} attach -r -t loop-github-sandbox-demo-2" in again.stdout


def test_the_demo_without_tmux_fails_in_one_line_saying_how_to_install_it(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    result = run_cli(tmp_path, "demo", env={"PATH": str(tmp_path / "bin")})
    assert result.returncode == 1
    assert len(result.stderr.splitlines()) == 1
    assert "tmux is needed" in result.stderr
    assert "apt-get install tmux" in result.stderr
    assert tree(tmp_path) == ["bin"]


def test_a_harness_that_exits_at_once_fails_the_demo_quoting_its_pane(place: Place) -> None:
    (place.work / "loop.yaml").write_text(BROKEN_HARNESS, encoding="utf-8")
    result = place.cli("--config", "loop.yaml", "demo")
    assert result.returncode == 1
    assert len(result.stderr.splitlines()) == 1
    assert "the harness in loop-github-sandbox-demo-1 exited; its pane shows: harness broke" in result.stderr


def test_a_sandbox_comment_read_from_stdin_comes_back_in_list_json(tmp_path: Path) -> None:
    assert sandbox(tmp_path, "new", "--title", "T").stdout.strip() == FIRST
    assert sandbox(tmp_path, "comment", "--work-item", FIRST, "--body", "-", stdin=HOSTILE).returncode == 0
    listed = sandbox(tmp_path, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    (item,) = [json.loads(line) for line in listed.stdout.splitlines()]
    assert item["work_item"] == FIRST
    assert item["labels"] == ["loop"]
    assert [(c["author"], c["body"]) for c in item["comments"]] == [("demo", HOSTILE)]


def test_hostile_comment_text_is_shown_escaped_in_the_sandbox_table(tmp_path: Path) -> None:
    sandbox(tmp_path, "new", "--title", "T")
    sandbox(tmp_path, "comment", "--work-item", FIRST, "--body", HOSTILE)
    table = sandbox(tmp_path, "list").stdout
    assert "\x1b" not in table
    assert "\r" not in table
    assert "\x07" not in table
    assert "run \\x1b[31mred\\x1b]0;owned\\x07 then\\x0d\\x1b[201~typed" in table


def test_the_demo_needs_no_git(place: Place) -> None:
    bin_dir = place.work.parent / "bin"  # everything on PATH but git
    bin_dir.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        for program in Path(folder).glob("*") if Path(folder).is_dir() else []:
            if not program.name.startswith("git") and not (bin_dir / program.name).exists():
                (bin_dir / program.name).symlink_to(program)
    result = run_cli(place.work, "demo", env={**place.env, "PATH": str(bin_dir)})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "↵ submitted (message 1)" in place.pane("loop-github-sandbox-demo-1")
    assert shutil.which("git", path=str(bin_dir)) is None
    assert not (place.work / ".the-loop" / "clones").exists()


def test_the_demos_last_lines_point_to_running_it_for_real(place: Place) -> None:
    result = place.cli("demo")
    assert result.returncode == 0, result.stdout + result.stderr
    last = result.stdout.splitlines()[-2:]
    assert any("Running it for real" in line and "README.md" in line for line in last), last
    assert last[-1].strip().endswith("-m app doctor") and " init --repo OWNER/REPO --user " in last[-1], last


def test_with_ui_enabled_the_demo_prints_the_pages_address(place: Place) -> None:
    (place.work / "loop.yaml").write_text(
        "polling: {sources: [{provider: sandbox, repos: [sandbox/demo], label: loop}]}\n"
        "routing: {authorizedUsers: [demo], tmux: {socketName: the-loop-demo}}\n"
        "ui: {enabled: true, port: 8799}\n",
        encoding="utf-8",
    )
    result = place.cli("--config", "loop.yaml", "demo")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line.strip() for line in result.stdout.splitlines()]
    assert "the fleet page, while `poll` runs: http://127.0.0.1:8799/" in lines
    assert not any("fleet page" in line for line in place.cli("demo").stdout.splitlines())  # off: not a word


def test_after_init_wrote_the_operators_github_file_the_demo_still_runs(place: Place) -> None:
    # found walking the README: after `the-loop init`, `scripts/demo.sh` read the operator's GitHub
    # file from ~/.config and refused ("no sandbox source"); the demo runs on the built-in one
    xdg = place.work.parent / "xdg"
    (xdg / "the-loop").mkdir(parents=True)
    (xdg / "the-loop" / "cli-config.yaml").write_text(
        "polling: {sources: [{provider: github, repos: [acme/widgets], label: agent}]}\n", encoding="utf-8"
    )
    result = run_cli(place.work, "demo", env={**place.env, "XDG_CONFIG_HOME": str(xdg), "PYTHONPATH": ""})
    assert result.returncode == 0, result.stderr
