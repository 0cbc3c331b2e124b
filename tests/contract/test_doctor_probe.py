"""ShDoctorProbe against the real tmux and gh: what `doctor` reads off a machine."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.doctor_probe import ShDoctorProbe
from domain.errors import LoopError
from domain.refs import RepoRef
from tests.git_support import Origins, require_git
from tests.tmux_support import require_tmux

PROBE = ShDoctorProbe(timeout=10)


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
