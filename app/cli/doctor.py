"""`doctor`: what the-loop needs from this machine, checked one line at a time, each with its fix."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Protocol

from app.config.settings import Settings
from domain.errors import LoopError
from domain.model import SessionRecord
from domain.refs import RepoRef
from domain.workspace import WorkspaceMode, clone_url


class DoctorProbe(Protocol):
    """What `doctor` asks the machine; nothing it does changes anything.

    Failure modes: every method raises `LoopError` whose message is the cause (binary not found,
    non-zero exit with its stderr, timeout); none raises anything else.
    """

    def version(self, binary: str) -> str:
        """The first line `binary` prints of its version (`tmux -V`, `gh --version`)."""

    def gh_auth(self, binary: str, host: str) -> str:
        """Who `gh` is logged in as on `host`."""

    def tmux_server(self, socket_name: str | None) -> str:
        """How the tmux server answers: its session count, or that none runs yet."""

    def repo_visible(self, binary: str, repo: RepoRef) -> str:
        """The repository's full name as the host reports it."""

    def git_remote(self, url: str, gh: str) -> str:
        """How the clone URL answers `git ls-remote` (https authenticated through `gh`)."""

    def writable(self, path: Path) -> str:
        """Whether `path` (or, when absent, the directory it would be created in) is writable."""


_REPO_FIX = "check its name in polling.sources, and that the gh account can read it"


class Mark(enum.Enum):
    OK = "✓"
    FAILED = "✗"
    SKIPPED = "–"  # not needed by this configuration


@dataclass(frozen=True, slots=True)
class Check:
    mark: Mark
    subject: str
    detail: str
    fix: str = ""

    def line(self) -> str:
        fix = f" — fix: {self.fix}" if self.fix and self.mark is Mark.FAILED else ""
        return f"{self.mark.value} {self.subject}: {self.detail}{fix}"


def _check(subject: str, ask: Callable[[], str], fix: str) -> Check:
    try:
        return Check(Mark.OK, subject, ask())
    except LoopError as error:
        return Check(Mark.FAILED, subject, str(error), fix)


def diagnose(settings: Settings, *, origin: str, probe: DoctorProbe) -> Iterator[Check]:
    """Every check, in the order an operator would fix them; a missing binary skips what needs it."""
    yield Check(Mark.OK, "config", f"valid ({origin})")
    root = settings.state_root
    yield _check(
        "state root", partial(probe.writable, root), f"make {root} a directory you can write, or set state.root"
    )
    tmux = _check("tmux", partial(probe.version, "tmux"), "install tmux 3.3 or newer (apt install tmux)")
    yield tmux
    if tmux.mark is Mark.OK:
        socket = settings.tmux_socket
        server = f"tmux server (-L {socket})" if socket else "tmux server"
        yield _check(
            server, partial(probe.tmux_server, socket), f"check `tmux {'-L ' + socket + ' ' if socket else ''}ls`"
        )
    yield from _github(settings, probe)
    yield from _workspaces(settings, probe)


def _github(settings: Settings, probe: DoctorProbe) -> Iterator[Check]:
    gh = settings.integrations.github.cli.binary
    repos = [source.repo for source in settings.sources() if source.provider == "github"]
    if not repos:
        yield Check(Mark.SKIPPED, "gh", "not needed: no github source configured")
    else:
        installed = _check(
            "gh", partial(probe.version, gh), "install gh (apt install gh), or set integrations.github.cli.binary"
        )
        yield installed
        if installed.mark is Mark.FAILED:
            return
        for host in sorted({repo.host for repo in repos}):
            yield _check(f"gh auth {host}", partial(probe.gh_auth, gh, host), f"gh auth login --hostname {host}")
        for repo in repos:
            yield _check(f"repository {repo}", partial(probe.repo_visible, gh, repo), _REPO_FIX)
    for source in settings.sources():
        if source.provider == "sandbox":
            yield Check(Mark.OK, f"repository {source.repo}", "sandbox (local, always visible)")


def _workspaces(settings: Settings, probe: DoctorProbe) -> Iterator[Check]:
    """With worktrees: git itself, and each repository's clone URL answering."""
    workspace = settings.routing.workspace
    if workspace.mode is not WorkspaceMode.WORKTREE:
        return
    git = _check("git", partial(probe.version, "git"), "install git (apt install git)")
    yield git
    if git.mark is Mark.FAILED:
        return
    gh = settings.integrations.github.cli.binary
    fix = "check routing.workspace.cloneUrl; for https, that gh is logged in and can read the repository"
    for repo in dict.fromkeys(source.repo for source in settings.sources()):
        yield _check(f"clone {repo}", partial(_remote, probe, workspace.clone_url, repo, gh), fix)


def _remote(probe: DoctorProbe, template: str, repo: RepoRef, gh: str) -> str:
    try:
        url = clone_url(template, repo)
    except ValueError as error:
        raise LoopError(str(error)) from None
    return probe.git_remote(url, gh)


def parked_checks(records: Iterable[SessionRecord]) -> Iterator[Check]:
    """An item whose agent the API refused (its credentials) waits for the operator: one line each."""
    for record in records:
        parked = record.park
        if parked is None or parked.resuming or not parked.cause.waits_for_operator:
            continue
        yield Check(
            Mark.FAILED,
            f"agent credentials ({record.item})",
            f"the API refused the {record.harness} agent's credentials (authentication_failed) since "
            f"{parked.since:%Y-%m-%d %H:%M:%S} UTC; the item is parked",
            f"renew the harness's API key or login (for Claude Code: ANTHROPIC_API_KEY, or `claude /login`), "
            f"then write `the-loop resume` on {record.item}",
        )
