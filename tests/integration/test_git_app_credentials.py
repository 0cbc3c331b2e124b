"""The daemon's clone and fetches of a repository, as the container builds its git, through the real
git and the real gh: as a GitHub App with that repository's installation token (from the GitHub
stand-in in App mode, gh's stored login absent), written nowhere; with gh's own login as before."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.clock import SystemClock
from adapters.doctor_probe import ShDoctorProbe
from adapters.github.app_probe import GhAppProbe
from app.config.settings import Settings
from app.container import Container
from domain.errors import CredentialsRefused, WorkspaceError
from domain.ports import WorkspacePort
from domain.refs import RepoRef, WorkItemRef
from domain.workspace import WorkspaceSpec
from tests.git_support import Origins, git, require_git
from tests.github_standin import StandIn
from tests.github_standin.app import TOKEN_PREFIX
from tests.github_standin.app_rig import APP_ID, AppKeyFile, app_key, app_mode
from tests.github_standin.git_http import Accepts, Asked, GitHttp
from tests.github_standin.rigs import standin

__all__ = ["app_key", "standin"]  # fixtures, imported to be used here

pytestmark = pytest.mark.gh
REPO = "acme/widgets"
_TOKEN_VARIABLES = ("GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN")


class Rig:
    """An origin of acme/widgets behind GitHub's git endpoint, and the daemon's environment: gh
    pointed at the stand-in (its operator's token in `GH_ENTERPRISE_TOKEN`), git trusting the endpoint."""

    def __init__(self, tmp: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch, accepts: Accepts) -> None:
        require_git()
        self.tmp, self.standin = tmp, standin
        self.repo = RepoRef.parse(REPO, host=standin.host)
        self.origins = Origins(tmp / "remote")
        self.origins.make(self.repo)
        self.server = GitHttp(tmp / "git-http", self.origins.root, accepts=accepts)
        self.expire_once_taken = False  # the installation's tokens end once the endpoint next takes one
        self.gh_config = Path(standin.gh_env()["GH_CONFIG_DIR"])
        for name in _TOKEN_VARIABLES:
            monkeypatch.delenv(name, raising=False)
        empty = tmp / "gitconfig"
        empty.write_text("", encoding="utf-8")
        daemon = standin.gh_env(GIT_SSL_CAINFO=str(self.server.cert), GIT_CONFIG_GLOBAL=str(empty))
        for name, value in (daemon | {"HOME": str(tmp / "home")}).items():
            monkeypatch.setenv(name, value)

    def workspaces(self, github: dict[str, object]) -> WorkspacePort:
        """The workspace port as the container builds it for the daemon."""
        settings = Settings.model_validate(
            {
                "state": {"root": str(self.tmp / "state")},
                "integrations": {"github": {"host": self.standin.host, **github}},
                "routing": {
                    "spawnWorkdir": str(self.tmp / "agents" / "{slug}"),
                    "workspace": {"mode": "worktree", "cloneUrl": self.server.template},
                },
            }
        )
        return Container(settings=settings).workspace_port()

    def spec(self, number: int) -> WorkspaceSpec:
        return WorkspaceSpec(WorkItemRef(self.repo, number), str(self.tmp / "agents" / str(number)))

    def clone(self) -> Path:
        return self.tmp / "state" / "clones" / self.repo.host / "acme" / "widgets.git"

    def refused(self) -> list[Asked]:
        """The endpoint's requests whose credentials it refused."""
        return [a for a in self.server.asked if not a.accepted]

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def app_rig(tmp_path: Path, standin: StandIn, app_key: AppKeyFile, monkeypatch: pytest.MonkeyPatch) -> Iterator[Rig]:
    app = app_mode(standin, app_key)
    app.install(7, "acme")
    world = standin.world
    world.now = SystemClock().now().replace(microsecond=0)  # the JWT is signed on the machine's clock

    def installation_token(user: str, password: str, full_name: str) -> bool:
        with world.lock:  # GitHub takes an installation's token for git as `x-access-token`
            taken = user == "x-access-token" and app.token_refusal(f"/repos/{full_name}", f"token {password}") is None
            if taken and rig.expire_once_taken:
                rig.expire_once_taken = False
                app.expire_tokens()  # the token ends between this request of a fetch and its next
            return taken

    rig = Rig(tmp_path, standin, monkeypatch, installation_token)
    yield rig
    rig.close()


def test_as_a_github_app_the_clone_and_a_fetch_use_the_installation_token_written_nowhere(
    app_rig: Rig, app_key: AppKeyFile
) -> None:
    app = app_rig.standin.world.app
    assert app is not None
    assert not (app_rig.gh_config / "hosts.yml").exists()  # gh has no stored login to fall back on
    workspaces = app_rig.workspaces({"app": {"id": APP_ID, "privateKeyFile": str(app_key.path)}})

    workspaces.create(app_rig.spec(1))  # the clone
    tip = app_rig.origins.commit(app_rig.repo, "later.txt")
    workspaces.create(app_rig.spec(2))  # a fetch into it

    assert git("rev-parse", "HEAD", cwd=Path(app_rig.spec(2).path)) == tip
    asked = app_rig.server.asked
    assert {(a.user, a.accepted) for a in asked} == {("x-access-token", True)}
    assert sum(a.path.endswith("/info/refs") for a in asked) == 2  # the clone's and the fetch's
    assert {(u.installation, u.refused) for u in app.uses} == {(7, False)}
    url = git("config", "remote.origin.url", cwd=app_rig.clone())
    assert url == app_rig.server.template.format(owner="acme", repo="widgets")
    written = [p for p in app_rig.tmp.rglob("*") if p.is_file() and TOKEN_PREFIX.encode() in p.read_bytes()]
    assert written == []


def app_workspaces(rig: Rig, key: AppKeyFile) -> WorkspacePort:
    return rig.workspaces({"app": {"id": APP_ID, "privateKeyFile": str(key.path)}})


def test_a_fetch_whose_token_github_refuses_gets_one_new_token_and_is_asked_once_more(
    app_rig: Rig, app_key: AppKeyFile
) -> None:
    app = app_rig.standin.world.app
    assert app is not None
    workspaces = app_workspaces(app_rig, app_key)
    workspaces.create(app_rig.spec(1))  # the clone, with the installation's first token
    app.expire_tokens()  # expired sooner than it said: the daemon still holds it as good for an hour
    tip = app_rig.origins.commit(app_rig.repo, "later.txt")

    workspaces.create(app_rig.spec(2))

    assert git("rev-parse", "HEAD", cwd=Path(app_rig.spec(2).path)) == tip
    assert len(app.exchanges_of(7)) == 2  # the clone's token, and one new one for the refused fetch
    assert len(app_rig.refused()) == 1
    written = [p for p in app_rig.tmp.rglob("*") if p.is_file() and TOKEN_PREFIX.encode() in p.read_bytes()]
    assert written == []


def test_a_fetch_whose_token_ends_after_its_refs_were_listed_gets_one_new_token_and_is_asked_once_more(
    app_rig: Rig, app_key: AppKeyFile
) -> None:
    app = app_rig.standin.world.app
    assert app is not None
    workspaces = app_workspaces(app_rig, app_key)
    workspaces.create(app_rig.spec(1))
    tip = app_rig.origins.commit(app_rig.repo, "later.txt")
    app_rig.expire_once_taken = True

    workspaces.create(app_rig.spec(2))

    assert git("rev-parse", "HEAD", cwd=Path(app_rig.spec(2).path)) == tip
    assert len(app.exchanges_of(7)) == 2
    [refused] = app_rig.refused()
    assert not refused.path.endswith("/info/refs")  # git's next request after the listing, not the listing


def test_a_clone_whose_new_token_is_refused_too_fails_naming_the_repository_after_one_retry(
    app_rig: Rig, app_key: AppKeyFile
) -> None:
    app = app_rig.standin.world.app
    assert app is not None
    app.token_seconds = 0  # every token GitHub hands out is refused from its first use

    with pytest.raises(WorkspaceError) as failed:
        app_workspaces(app_rig, app_key).create(app_rig.spec(1))

    said = str(failed.value)
    assert "acme/widgets" in said and "Authentication failed" in said and "new installation token" in said, said
    assert len(app.exchanges_of(7)) == 2  # the first token and one new one: no more
    assert len(app_rig.refused()) == 2
    assert not app_rig.clone().exists()


def test_a_fetch_failing_for_another_reason_than_its_token_is_not_asked_again(
    app_rig: Rig, app_key: AppKeyFile
) -> None:
    app = app_rig.standin.world.app
    assert app is not None
    absent = RepoRef.parse("acme/gadgets", host=app_rig.standin.host)  # the installation's, but no such repository
    spec = WorkspaceSpec(WorkItemRef(absent, 1), str(app_rig.tmp / "agents" / "gadgets"))

    with pytest.raises(WorkspaceError) as failed:
        app_workspaces(app_rig, app_key).create(spec)

    assert "acme/gadgets" in str(failed.value) and "not found" in str(failed.value), failed.value
    assert len(app.exchanges_of(7)) == 1
    assert [a.accepted for a in app_rig.server.asked] == [True]  # its token taken, asked once


def test_with_ghs_own_login_the_clone_is_answered_by_its_stored_login_as_before(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = standin.reset()

    def operators_login(user: str, password: str, full_name: str) -> bool:
        return (user, password) == ("operator", world.token)

    rig = Rig(tmp_path, standin, monkeypatch, operators_login)
    try:
        port = rig.server.template.split(":")[2].split("/")[0]
        config = tmp_path / "gh-own"
        config.mkdir()
        (config / "hosts.yml").write_text(
            f"localhost:{port}:\n    oauth_token: {world.token}\n    user: operator\n", encoding="utf-8"
        )
        monkeypatch.setenv("GH_CONFIG_DIR", str(config))
        monkeypatch.delenv("GH_ENTERPRISE_TOKEN")  # the operator's stored login, not a token of the environment

        rig.workspaces({}).create(rig.spec(1))

        assert os.path.isdir(rig.spec(1).path)
        assert {(a.user, a.accepted) for a in rig.server.asked} == {("operator", True)}
    finally:
        rig.close()


def doctors_app(rig: Rig, key: AppKeyFile) -> GhAppProbe:
    """What `doctor` asks of the App, its key read."""
    world = rig.standin.world

    def github_now() -> float:
        return world.now.timestamp()

    app = GhAppProbe(
        app_id=APP_ID,
        key_file=key.path,
        installations={},
        clock=github_now,
        monotonic=SystemClock().monotonic,
        host=rig.standin.host,
        env=dict(os.environ),  # the daemon's: gh pointed at the stand-in, git trusting the endpoint
        timeout=20,
    )
    app.key()
    return app


def test_doctors_clone_check_as_a_github_app_asks_git_with_the_installation_token(
    app_rig: Rig, app_key: AppKeyFile
) -> None:
    app = doctors_app(app_rig, app_key)
    url = app_rig.server.template.format(owner="acme", repo="widgets")

    said = ShDoctorProbe(timeout=20).git_remote(url, "gh", app.git_env(app_rig.repo))

    assert said == f"{url} answers (default branch main)"
    assert {(a.user, a.accepted) for a in app_rig.server.asked} == {("x-access-token", True)}


def test_doctors_clone_check_tells_a_refused_token_apart_and_a_new_one_is_taken(
    app_rig: Rig, app_key: AppKeyFile
) -> None:
    standin_app = app_rig.standin.world.app
    assert standin_app is not None
    app, probe = doctors_app(app_rig, app_key), ShDoctorProbe(timeout=20)
    url = app_rig.server.template.format(owner="acme", repo="widgets")
    env = app.git_env(app_rig.repo)
    standin_app.expire_tokens()

    with pytest.raises(CredentialsRefused):
        probe.git_remote(url, "gh", env)
    said = probe.git_remote(url, "gh", app.git_env(app_rig.repo, refused=env))

    assert said == f"{url} answers (default branch main)"
    assert len(standin_app.exchanges_of(7)) == 2
