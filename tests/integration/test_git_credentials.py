"""gh is git's only credential helper, and no token is written anywhere: a local HTTP
server that demands authentication, and a stand-in `gh` that records what git asked it. The
environment a GitHub App's token comes in is asked for an https remote only, and its failure named."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from adapters.git.adapter import GitWorkspaces
from domain.errors import TrackerError, WorkspaceError
from domain.refs import RepoRef, WorkItemRef
from domain.workspace import WorkspaceSpec
from tests.git_support import Origins, require_git

TOKEN = "gho_not-a-real-token-1234"


class _Refuse(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.server.seen.append(self.headers.get("Authorization", ""))  # type: ignore[attr-defined]
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="git"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Refuse)
    httpd.seen = []  # type: ignore[attr-defined]
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield httpd
    finally:
        httpd.shutdown()


def test_git_asks_the_operators_gh_for_credentials_and_writes_no_token(
    server: ThreadingHTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_git()
    calls = tmp_path / "gh-calls"
    gh = tmp_path / "gh"
    gh.write_text(
        f'#!/bin/sh\necho "$@" >> {calls}\ncat > /dev/null\n'
        f'[ "$3" = get ] && printf "username=x-access-token\\npassword={TOKEN}\\n"\nexit 0\n',
        encoding="utf-8",
    )
    gh.chmod(0o755)
    own = tmp_path / "own-helper-calls"  # a helper in the operator's git config is not asked
    (tmp_path / "gitconfig").write_text(f"[credential]\n\thelper = !echo used >> {own}\n", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    host, port = server.server_address[:2]
    workspaces = GitWorkspaces(
        root=tmp_path / "state" / "clones", url_template=f"http://{host}:{port}/{{owner}}/{{repo}}.git", gh=str(gh)
    )
    spec = WorkspaceSpec(WorkItemRef(RepoRef.parse("acme/widgets"), 1), str(tmp_path / "agents" / "1"))

    with pytest.raises(WorkspaceError, match="Authentication failed"):
        workspaces.create(spec)

    assert calls.read_text(encoding="utf-8").splitlines()[0] == "auth git-credential get"
    assert any(header.startswith("Basic ") for header in server.seen)  # git sent what gh answered
    assert not own.exists()
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "gh" and TOKEN in p.read_text("latin-1")]
    assert written == []


def test_a_repository_whose_token_cannot_be_had_fails_its_workspace_saying_why(tmp_path: Path) -> None:
    require_git()

    def no_token(repo: RepoRef, *, refused: Mapping[str, str] | None = None) -> dict[str, str]:
        raise TrackerError(f"{repo}: the GitHub App 424242 is not installed on {repo.full_name} (HTTP 404)")

    workspaces = GitWorkspaces(
        root=tmp_path / "state" / "clones", url_template="https://github.com:9/{owner}/{repo}.git", remote_env=no_token
    )
    spec = WorkspaceSpec(WorkItemRef(RepoRef.parse("acme/widgets"), 1), str(tmp_path / "agents" / "1"))

    with pytest.raises(WorkspaceError, match=r"no credentials for git to fetch acme/widgets: .* not installed"):
        workspaces.create(spec)


def test_a_remote_git_reaches_without_https_is_fetched_in_the_daemons_own_environment(tmp_path: Path) -> None:
    require_git()
    origins = Origins(tmp_path / "remote")
    repo = RepoRef.parse("acme/widgets")
    origins.make(repo)
    asked: list[RepoRef] = []

    def token_env(repo: RepoRef, *, refused: Mapping[str, str] | None = None) -> dict[str, str]:
        asked.append(repo)
        return {}

    workspaces = origins.workspaces(tmp_path / "state", remote_env=token_env)
    workspaces.create(WorkspaceSpec(WorkItemRef(repo, 1), str(tmp_path / "agents" / "1")))

    assert (tmp_path / "agents" / "1" / "file0.txt").is_file() and asked == []


def test_a_clone_url_on_another_host_than_the_repositorys_is_never_handed_its_token(tmp_path: Path) -> None:
    """gh's credential helper answers any host but github.com from GH_ENTERPRISE_TOKEN: a cloneUrl
    naming a mirror elsewhere would be sent the installation's token. It is not asked for."""
    require_git()
    repo = RepoRef.parse("acme/widgets")
    asked: list[RepoRef] = []

    def token_env(repo: RepoRef, *, refused: Mapping[str, str] | None = None) -> dict[str, str]:
        asked.append(repo)
        return {"GH_TOKEN": "ghs_secret", "GH_ENTERPRISE_TOKEN": "ghs_secret"}

    workspaces = GitWorkspaces(
        root=tmp_path / "state" / "clones",
        url_template="https://mirror.invalid/{owner}/{repo}.git",
        timeout=60,
        remote_env=token_env,
    )
    with pytest.raises(WorkspaceError):
        workspaces.create(WorkspaceSpec(WorkItemRef(repo, 1), str(tmp_path / "agents" / "1")))

    assert asked == []
