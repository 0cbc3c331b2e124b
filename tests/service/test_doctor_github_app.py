"""`doctor` with a GitHub App configured: its key, GitHub taking its JWT, its installation on each
watched repository, and each installation's permissions, each one line with its fix; gh's own login
is not needed."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from app.cli.doctor import Check, Mark, diagnose
from app.config.settings import Settings
from domain.errors import LoopError
from domain.github_app import EVENTS, PERMISSIONS, InstallationGrant
from domain.refs import RepoRef
from tests.service.test_doctor import DAEMON, FakeMachine

APP = {
    "polling": {"sources": [{"repos": ["o/a", "o/b"], "label": "loop"}]},
    "routing": {"spawnWorkdir": "/w/{slug}"},
    "integrations": {"github": {"app": {"id": 77, "privateKeyFile": "/keys/app.pem"}}},
}


GRANTED = {permission.key: permission.access.value for permission in PERMISSIONS}


class FakeApp:
    """The App's side as doctor sees it; named parts fail. Every repository is in installation 7 of
    the organization `o`, granted `permissions` and sent `events`."""

    def __init__(
        self,
        *,
        failing: Collection[str] = (),
        permissions: Mapping[str, str] = GRANTED,
        events: tuple[str, ...] = EVENTS,
    ) -> None:
        self.failing = failing
        self.permissions, self.events = permissions, events
        self.asked: list[str] = []

    def key(self) -> str:
        self.asked.append("key")
        if "key" in self.failing:
            raise LoopError("/keys/app.pem: the GitHub App's private key must be readable by its owner only")
        return "/keys/app.pem: an RSA key of 2048 bits, its owner's alone"

    def app(self) -> str:
        self.asked.append("app")
        if "app" in self.failing:
            raise LoopError("GitHub refused the GitHub App 77's JWT (HTTP 401: A JSON web token could not be decoded)")
        return "GitHub takes its JWT: the-loop-bot"

    def installation(self, repo: RepoRef) -> str:
        self.asked.append(str(repo))
        if str(repo) in self.failing:
            raise LoopError(f"{repo}: the GitHub App 77 is not installed on {repo.full_name} (HTTP 404)")
        return f"installation 7: its token reads {repo.full_name}"

    def git_env(self, repo: RepoRef, *, refused: Mapping[str, str] | None = None) -> Mapping[str, str]:
        """`ghs_<name>`, and `ghs_<name>_new` in place of a refused one."""
        self.asked.append(f"git {repo}" if refused is None else f"git {repo} in place of {refused['GH_TOKEN']}")
        if f"git {repo}" in self.failing:
            raise LoopError(f"{repo}: the GitHub App's installation 7 is gone (HTTP 404)")
        token = f"ghs_{repo.name}" if refused is None else f"ghs_{repo.name}_new"
        return {"GH_TOKEN": token, "GH_ENTERPRISE_TOKEN": token}

    def grant(self, repo: RepoRef) -> InstallationGrant:
        self.asked.append(f"grant {repo}")
        if f"grant {repo}" in self.failing:
            raise LoopError("GitHub refused the GitHub App 77's JWT (HTTP 401: Bad credentials)")
        return InstallationGrant(7, "o", organization=True, permissions=self.permissions, events=self.events)


def checks(app: FakeApp, document: dict[str, Any] = APP, machine: FakeMachine | None = None) -> list[Check]:
    found = diagnose(Settings(**document), origin="loop.yaml", probe=machine or FakeMachine(), environ=DAEMON, app=app)
    return list(found)


def test_a_ready_app_passes_its_key_its_jwt_and_each_repositorys_installation_without_gh_login() -> None:
    found = checks(FakeApp(), machine=FakeMachine(logged_out={"github.com"}))
    github = [c.line() for c in found if c.subject.startswith(("gh", "github app", "repository", "installation"))]
    assert github == [
        "✓ gh: gh 9.9",
        "✓ github app key: /keys/app.pem: an RSA key of 2048 bits, its owner's alone",
        "✓ github app 77: GitHub takes its JWT: the-loop-bot",
        "✓ repository o/a: installation 7: its token reads o/a",
        "✓ installation 7 permissions: Issues: Read and write, Pull requests: Read and write, Contents: Read-only,"
        " Metadata: Read-only, Members: Read-only; every event (o)",
        "✓ repository o/b: installation 7: its token reads o/b",
    ]


def test_a_key_that_cannot_be_used_fails_with_the_fix_and_nothing_is_asked_of_github() -> None:
    app = FakeApp(failing={"key"})
    found = checks(app)
    failed = [c for c in found if c.mark is Mark.FAILED]
    assert [c.subject for c in failed] == ["github app key"]
    line = failed[0].line()
    assert "chmod 600 /keys/app.pem" in line and "integrations.github.app.privateKeyFile" in line
    assert app.asked == ["key"]


def test_a_jwt_github_refuses_fails_and_no_installation_is_asked() -> None:
    app = FakeApp(failing={"app"})
    failed = [c for c in checks(app) if c.mark is Mark.FAILED]
    assert [c.subject for c in failed] == ["github app 77"] and "integrations.github.app.id" in failed[0].line()
    assert app.asked == ["key", "app"]


def test_a_repository_without_the_apps_installation_is_named_with_the_fix() -> None:
    failed = [c for c in checks(FakeApp(failing={"o/b"})) if c.mark is Mark.FAILED]
    assert [c.subject for c in failed] == ["repository o/b"]
    assert "install the App" in failed[0].line()


def test_without_an_app_gh_login_is_checked_as_before() -> None:
    document = {key: value for key, value in APP.items() if key != "integrations"}
    found = checks(FakeApp(), document)
    assert [c.subject for c in found if c.subject.startswith(("gh", "github app"))] == ["gh", "gh auth github.com"]


def test_an_installation_holding_issues_read_only_fails_naming_the_permission_and_where_to_change_it() -> None:
    app = FakeApp(permissions={**GRANTED, "issues": "read"})
    failed = [c for c in checks(app) if c.mark is Mark.FAILED]
    assert [c.subject for c in failed] == ["installation 7 permission Issues"]
    line = failed[0].line()
    assert "Read-only; the-loop needs Read and write" in line, line
    assert "Permissions & events" in line and "Repository permissions" in line and "Issues: Read and write" in line
    assert "o, the installation's owner, accepts" in line, line


def test_a_permission_not_granted_at_all_fails_and_every_other_one_is_not_said_again() -> None:
    granted = {key: value for key, value in GRANTED.items() if key != "pull_requests"}
    found = checks(FakeApp(permissions=granted))
    said = [c for c in found if c.subject.startswith("installation 7")]
    assert [(c.mark, c.subject) for c in said] == [(Mark.FAILED, "installation 7 permission Pull requests")]
    assert said[0].detail.startswith("not granted; the-loop needs Read and write")


def test_members_and_events_missing_are_warnings_polling_does_without() -> None:
    granted = {key: value for key, value in GRANTED.items() if key != "members"}
    found = checks(FakeApp(permissions=granted, events=("issue_comment", "issues")))
    said = {c.subject: c for c in found if c.subject.startswith("installation 7")}
    assert {subject: c.mark for subject, c in said.items()} == {
        "installation 7 permission Members": Mark.WARNING,
        "installation 7 events": Mark.WARNING,
    }
    assert "pull_request_review_comment" in said["installation 7 events"].detail
    assert "Subscribe to events" in said["installation 7 events"].fix


def test_an_installations_permissions_that_cannot_be_read_fail_with_why() -> None:
    found = checks(FakeApp(failing={"grant o/a"}))
    failed = [c for c in found if c.mark is Mark.FAILED]
    assert [c.subject for c in failed] == ["installation of o/a permissions"]
    assert "HTTP 401" in failed[0].detail


def test_a_worktrees_clone_is_asked_with_the_installations_token_and_not_ghs_own_login() -> None:
    document = {**APP, "routing": {"spawnWorkdir": "/w/{slug}", "workspace": {"mode": "worktree"}}}
    machine = FakeMachine(logged_out={"github.com"})
    found = checks(FakeApp(), document, machine)
    clones = [c.line() for c in found if c.subject.startswith("clone")]
    assert clones == [
        "✓ clone o/a: https://github.com/o/a.git answers (default branch main)",
        "✓ clone o/b: https://github.com/o/b.git answers (default branch main)",
    ]
    assert machine.git_envs["https://github.com/o/a.git"] == {"GH_TOKEN": "ghs_a", "GH_ENTERPRISE_TOKEN": "ghs_a"}


def test_a_clone_whose_installation_gives_no_token_fails_saying_why_with_the_apps_fix() -> None:
    document = {**APP, "routing": {"spawnWorkdir": "/w/{slug}", "workspace": {"mode": "worktree"}}}
    failed = [c for c in checks(FakeApp(failing={"git o/b"}), document) if c.mark is Mark.FAILED]
    assert [c.subject for c in failed] == ["clone o/b"]
    line = failed[0].line()
    assert "installation 7 is gone" in line and "Contents: Read-only" in line, line


def test_a_clone_url_on_another_host_is_asked_without_the_installations_token() -> None:
    workspace = {"mode": "worktree", "cloneUrl": "https://mirror.example/{owner}/{repo}.git"}
    document = {**APP, "routing": {"spawnWorkdir": "/w/{slug}", "workspace": workspace}}
    machine = FakeMachine()
    checks(FakeApp(), document, machine)
    assert machine.git_envs == {"https://mirror.example/o/a.git": None, "https://mirror.example/o/b.git": None}


WORKTREES = {**APP, "routing": {"spawnWorkdir": "/w/{slug}", "workspace": {"mode": "worktree"}}}


def test_a_clone_whose_token_git_is_refused_is_asked_once_more_with_a_new_one() -> None:
    app, machine = FakeApp(), FakeMachine(refused_tokens={"ghs_a"})
    found = checks(app, WORKTREES, machine)
    assert [c.line() for c in found if c.subject == "clone o/a"] == [
        "✓ clone o/a: https://github.com/o/a.git answers (default branch main)"
    ]
    assert [asked for asked in app.asked if asked.startswith("git o/a")] == ["git o/a", "git o/a in place of ghs_a"]
    assert machine.git_envs["https://github.com/o/a.git"] == {
        "GH_TOKEN": "ghs_a_new",
        "GH_ENTERPRISE_TOKEN": "ghs_a_new",
    }


def test_a_clone_whose_new_token_is_refused_too_fails_with_the_apps_fix_after_one_retry() -> None:
    app, machine = FakeApp(), FakeMachine(refused_tokens={"ghs_a", "ghs_a_new"})
    failed = [c for c in checks(app, WORKTREES, machine) if c.mark is Mark.FAILED]
    assert [c.subject for c in failed] == ["clone o/a"]
    assert "Authentication failed" in failed[0].line() and "Contents: Read-only" in failed[0].line()
    assert [asked for asked in app.asked if asked.startswith("git o/a")] == ["git o/a", "git o/a in place of ghs_a"]


def test_a_clone_failing_for_another_reason_than_its_token_is_not_asked_again() -> None:
    app, machine = FakeApp(), FakeMachine(missing={"https://github.com/o/a.git"})
    failed = [c for c in checks(app, WORKTREES, machine) if c.mark is Mark.FAILED]
    assert [c.subject for c in failed] == ["clone o/a"] and "not found" in failed[0].line()
    assert [asked for asked in app.asked if asked.startswith("git o/a")] == ["git o/a"]
