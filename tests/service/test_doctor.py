"""`doctor` over a fake machine: one line per check, the fix on each failure, skips where not needed."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from app.cli.doctor import Check, Mark, diagnose
from app.config.settings import Settings
from domain.errors import LoopError
from domain.refs import RepoRef

GITHUB = {"polling": {"sources": [{"repos": ["o/a", "ghe.example/o/b"], "label": "loop"}]}}
SANDBOX = {"polling": {"sources": [{"provider": "sandbox", "repos": ["sandbox/demo"], "label": "loop"}]}}


class FakeMachine:
    """A machine where named things are missing or failing."""

    def __init__(
        self, *, missing: Collection[str] = (), logged_out: Collection[str] = (), hidden: Collection[str] = ()
    ) -> None:
        self.missing, self.logged_out, self.hidden = missing, logged_out, hidden

    def version(self, binary: str) -> str:
        if binary in self.missing:
            raise LoopError(f"{binary} not found on PATH")
        return f"{binary} 9.9"

    def gh_auth(self, binary: str, host: str) -> str:
        if host in self.logged_out:
            raise LoopError(f"{host}: not logged in")
        return f"Logged in to {host} as me"

    def tmux_server(self, socket_name: str | None) -> str:
        if "tmux-server" in self.missing:
            raise LoopError("tmux did not answer within 10 s")
        return "not running yet"

    def repo_visible(self, binary: str, repo: RepoRef) -> str:
        if str(repo) in self.hidden:
            raise LoopError("gh exited 1: HTTP 404: Not Found")
        return f"visible as {repo.full_name}"

    def git_remote(self, url: str, gh: str) -> str:
        if url in self.missing:
            raise LoopError(f"git ls-remote {url}: fatal: repository '{url}' not found")
        return f"{url} answers (default branch main)"

    def writable(self, path: Path) -> str:
        return f"{path} is writable"


def checks(document: dict[str, Any], machine: FakeMachine) -> list[Check]:
    return list(diagnose(Settings(**document), origin="loop.yaml", probe=machine))


def marks(found: list[Check]) -> dict[str, Mark]:
    return {check.subject: check.mark for check in found}


def test_a_healthy_machine_passes_every_check_with_one_line_each() -> None:
    found = checks(GITHUB, FakeMachine())
    assert set(marks(found).values()) == {Mark.OK}
    assert [c.subject for c in found] == [
        "config",
        "state root",
        "tmux",
        "tmux server",
        "gh",
        "gh auth ghe.example",
        "gh auth github.com",
        "repository o/a",
        "repository ghe.example/o/b",
    ]


def test_missing_tmux_is_a_failure_with_the_fix() -> None:
    found = checks(GITHUB, FakeMachine(missing={"tmux"}))
    tmux = next(c for c in found if c.subject == "tmux")
    assert tmux.line() == "✗ tmux: tmux not found on PATH — fix: install tmux 3.3 or newer (apt install tmux)"


def test_missing_tmux_skips_the_server_check_and_goes_on_to_github() -> None:
    found = checks(GITHUB, FakeMachine(missing={"tmux"}))
    assert not any(c.subject.startswith("tmux server") for c in found)
    assert marks(found)["repository o/a"] is Mark.OK


def test_missing_gh_fails_once_and_skips_what_needs_it() -> None:
    found = checks(GITHUB, FakeMachine(missing={"gh"}))
    assert marks(found)["gh"] is Mark.FAILED
    assert not any(c.subject.startswith(("gh auth", "repository")) for c in found)


def test_gh_login_is_checked_per_configured_host() -> None:
    found = checks(GITHUB, FakeMachine(logged_out={"ghe.example"}))
    failed = [c.line() for c in found if c.mark is Mark.FAILED]
    assert failed == ["✗ gh auth ghe.example: ghe.example: not logged in — fix: gh auth login --hostname ghe.example"]


def test_an_invisible_repository_is_named() -> None:
    found = checks(GITHUB, FakeMachine(hidden={"o/a"}))
    assert [c.subject for c in found if c.mark is Mark.FAILED] == ["repository o/a"]


def test_a_sandbox_only_config_does_not_need_gh() -> None:
    found = checks(SANDBOX, FakeMachine(missing={"gh"}))
    assert marks(found)["gh"] is Mark.SKIPPED
    assert marks(found)["repository sandbox/demo"] is Mark.OK
    assert Mark.FAILED not in marks(found).values()


def test_an_unanswering_tmux_server_names_the_private_socket() -> None:
    found = checks({**SANDBOX, "routing": {"tmux": {"socketName": "mine"}}}, FakeMachine(missing={"tmux-server"}))
    server = next(c for c in found if c.subject.startswith("tmux server"))
    assert server.line() == "✗ tmux server (-L mine): tmux did not answer within 10 s — fix: check `tmux -L mine ls`"


WORKTREES = {**GITHUB, "routing": {"spawnWorkdir": "/w/{slug}", "workspace": {"mode": "worktree"}}}


def test_with_worktrees_git_and_every_repositorys_clone_url_are_checked() -> None:
    found = checks(WORKTREES, FakeMachine())
    assert [c.line() for c in found][-3:] == [
        "✓ git: git 9.9",
        "✓ clone o/a: https://github.com/o/a.git answers (default branch main)",
        "✓ clone ghe.example/o/b: https://ghe.example/o/b.git answers (default branch main)",
    ]


def test_a_clone_url_that_does_not_answer_is_named_with_the_fix() -> None:
    found = checks(WORKTREES, FakeMachine(missing={"https://github.com/o/a.git"}))
    assert [c.line() for c in found if c.mark is Mark.FAILED] == [
        "✗ clone o/a: git ls-remote https://github.com/o/a.git: fatal: repository 'https://github.com/o/a.git' "
        "not found — fix: check routing.workspace.cloneUrl; for https, that gh is logged in and can read the "
        "repository"
    ]


def test_missing_git_fails_once_and_skips_the_clone_checks() -> None:
    found = checks(WORKTREES, FakeMachine(missing={"git"}))
    assert marks(found)["git"] is Mark.FAILED
    assert not any(c.subject.startswith("clone ") for c in found)


def test_without_worktrees_git_is_not_checked() -> None:
    found = checks(GITHUB, FakeMachine(missing={"git"}))
    assert not any(c.subject in {"git"} or c.subject.startswith("clone ") for c in found)


def test_issue20_item4_doctor_says_which_item_waits_for_new_agent_credentials_and_how_to_resume_it() -> None:
    from datetime import UTC, datetime

    from app.cli.doctor import parked_checks
    from domain.model import SessionRecord
    from domain.parking import Park, ParkCause
    from domain.refs import WorkItemRef

    since = datetime(2026, 12, 1, 15, 0, tzinfo=UTC)
    item = WorkItemRef.parse("github:acme/widgets#7")
    refused = SessionRecord(item, "claude", "sid", "/w", park=Park(ParkCause.AUTHENTICATION, since, None))
    limited = SessionRecord(item, "claude", "sid", "/w", park=Park(ParkCause.RATE_LIMIT, since, since))

    (check,) = parked_checks([refused, limited, SessionRecord(item, "claude", "sid", "/w")])

    assert check.mark is Mark.FAILED
    assert check.line() == (
        "✗ agent credentials (github:acme/widgets#7): the API refused the claude agent's credentials "
        "(authentication_failed) since 2026-12-01 15:00:00 UTC; the item is parked — fix: renew the harness's "
        "API key or login (for Claude Code: ANTHROPIC_API_KEY, or `claude /login`), then write `the-loop resume` "
        "on github:acme/widgets#7"
    )
