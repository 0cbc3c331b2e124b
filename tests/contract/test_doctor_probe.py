"""ShDoctorProbe against the real tmux and gh: what `doctor` reads off a machine."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.doctor_probe import ShDoctorProbe
from domain.errors import LoopError
from domain.refs import RepoRef
from tests.git_support import Origins, require_git
from tests.tmux_support import require_tmux

PROBE = ShDoctorProbe(timeout=10)
ROOT = Path(__file__).resolve().parents[2]


def require_gh() -> None:
    if shutil.which("gh") is None:
        pytest.skip("SKIPPED LOUDLY: the gh binary is not installed (CI installs it)")


@pytest.fixture
def private_tmux(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    require_tmux()
    monkeypatch.setenv("TMUX_TMPDIR", str(tmp_path))
    monkeypatch.delenv("TMUX", raising=False)
    yield "doctor-probe"
    subprocess.run(["tmux", "-L", "doctor-probe", "kill-server"], capture_output=True, check=False)


def test_the_tmux_version_is_its_first_line() -> None:
    require_tmux()
    assert PROBE.version("tmux").startswith("tmux ")


def test_the_gh_version_is_its_first_line() -> None:
    require_gh()
    assert PROBE.version("gh").startswith("gh version ")


def test_a_binary_missing_from_path_is_named() -> None:
    with pytest.raises(LoopError, match=r"^no-such-binary-xyz not found on PATH$"):
        PROBE.version("no-such-binary-xyz")


def test_a_server_not_yet_started_is_not_a_failure(private_tmux: str) -> None:
    assert PROBE.tmux_server(private_tmux) == "not running yet (the first spawn starts it)"


def test_a_running_server_counts_the_loops_sessions(private_tmux: str) -> None:
    for name in ("loop-github-o-r-1", "other"):
        subprocess.run(["tmux", "-L", private_tmux, "new-session", "-d", "-s", name, "sleep 60"], check=True)
    assert PROBE.tmux_server(private_tmux) == "answers: 2 sessions, 1 of them the-loop's"


def test_gh_not_logged_in_on_a_host_is_a_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_gh()
    monkeypatch.setenv("GH_CONFIG_DIR", str(tmp_path))  # an empty gh: logged in nowhere
    for token in ("GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"):
        monkeypatch.delenv(token, raising=False)
    with pytest.raises(LoopError):
        PROBE.gh_auth("gh", "ghe.invalid")


def test_a_state_root_still_to_be_created_is_writable_through_its_parent(tmp_path: Path) -> None:
    assert PROBE.writable(tmp_path / "a" / "b") == f"{tmp_path / 'a' / 'b'} will be created (in {tmp_path})"


def test_a_file_where_the_state_root_should_be_is_refused(tmp_path: Path) -> None:
    (tmp_path / "root").write_text("", encoding="utf-8")
    with pytest.raises(LoopError, match="root is a file, not a directory"):
        PROBE.writable(tmp_path / "root")


def test_a_clone_url_that_answers_names_its_default_branch(tmp_path: Path) -> None:
    require_git()
    origins = Origins(tmp_path)
    origins.make(RepoRef.parse("o/r"))
    url = f"file://{tmp_path}/o/r.git"
    assert PROBE.git_remote(url, "gh") == f"{url} answers (default branch main)"


def test_a_clone_url_that_does_not_answer_is_gits_message(tmp_path: Path) -> None:
    require_git()
    with pytest.raises(LoopError) as error:
        PROBE.git_remote(f"file://{tmp_path}/missing.git", "gh")
    assert str(error.value) == (
        f"git ls-remote file://{tmp_path}/missing.git: fatal: '{tmp_path}/missing.git' does not appear to be a git "
        "repository"
    )


def test_the_tmux_servers_environment_is_what_its_panes_inherit(private_tmux: str) -> None:
    assert PROBE.tmux_environment(private_tmux) is None  # none runs yet: the daemon's will be used
    started = {**os.environ, "LOOP_PROBE_MARK": "from-the-server"}
    subprocess.run(["tmux", "-L", private_tmux, "new-session", "-d", "-s", "x", "sleep 60"], env=started, check=True)
    server = PROBE.tmux_environment(private_tmux)
    assert server is not None and server["LOOP_PROBE_MARK"] == "from-the-server"


def test_a_harness_is_found_on_the_path_it_is_given_and_run_with_that_environment(
    tmp_path: Path,
) -> None:
    fake = tmp_path / "claude"
    fake.write_text('#!/bin/sh\necho "2.1.328 (Claude Code) $HOME"\n', encoding="utf-8")
    fake.chmod(0o755)
    env = {"PATH": str(tmp_path), "HOME": "/pane/home"}
    assert PROBE.harness_version("claude", env) == f"2.1.328 (Claude Code) /pane/home ({fake})"
    with pytest.raises(LoopError, match=r"^claude not found on the panes' PATH \(/nowhere\)$"):
        PROBE.harness_version("claude", {"PATH": "/nowhere"})


def test_a_json_file_is_read_and_an_absent_one_is_none(tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text('{"hasCompletedOnboarding": true}', encoding="utf-8")
    assert PROBE.json_file(tmp_path / "c.json") == {"hasCompletedOnboarding": True}
    assert PROBE.json_file(tmp_path / "none.json") is None
    (tmp_path / "bad.json").write_text("[1", encoding="utf-8")
    with pytest.raises(LoopError, match="not JSON"):
        PROBE.json_file(tmp_path / "bad.json")


def test_a_toml_file_is_read_and_an_absent_one_is_none(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('model_provider = "corp"\n[projects."/w"]\ntrust_level = "trusted"\n')
    assert PROBE.toml_file(tmp_path / "config.toml") == {
        "model_provider": "corp",
        "projects": {"/w": {"trust_level": "trusted"}},
    }
    assert PROBE.toml_file(tmp_path / "none.toml") is None
    (tmp_path / "bad.toml").write_text("[projects", encoding="utf-8")
    with pytest.raises(LoopError, match="not TOML"):
        PROBE.toml_file(tmp_path / "bad.toml")


def test_a_file_in_a_read_only_folder_cannot_be_replaced() -> None:
    # root writes any folder: the probe then runs in a child turned `nobody`, in a folder nobody
    # may only read; the child says by its exit status what the probe answered
    top = Path(tempfile.mkdtemp(prefix="doctor-ro-"))
    try:
        top.chmod(0o755)
        (top / "ro").mkdir()
        (top / "ro" / "c.json").write_text("{}", encoding="utf-8")
        (top / "ro" / "c.json").chmod(0o644)
        (top / "ro").chmod(0o555)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            status = 3
            try:
                if os.geteuid() == 0:
                    os.setgid(65534)
                    os.setuid(65534)
                PROBE.file_writable(top / "ro" / "c.json")
                status = 1
            except LoopError as error:
                status = 0 if "is not writable" in str(error) else 2
            finally:
                os._exit(status)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        (top / "ro").chmod(0o755)
        shutil.rmtree(top)


def test_a_writable_file_and_one_to_be_created(tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text("{}", encoding="utf-8")
    assert PROBE.file_writable(tmp_path / "c.json") == f"{tmp_path / 'c.json'} is writable"
    assert PROBE.file_writable(tmp_path / "n.json") == f"{tmp_path / 'n.json'} will be created"


def test_a_port_in_use_is_not_free() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(LoopError, match=rf"^cannot listen on 127.0.0.1:{port}: "):
            PROBE.port_free("127.0.0.1", port)
    assert PROBE.port_free("127.0.0.1", port) == f"127.0.0.1:{port} is free"
