"""`doctor`: what the-loop needs from this machine, checked one line at a time, each with its fix."""

from __future__ import annotations

import os
import statistics
from collections.abc import Iterable, Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Protocol

from adapters.agents.doctor import Check, Found, HarnessDoctor, HarnessProbe, Mark, check
from adapters.harnesses import doctors
from app.cli.doctor_app import grant_checks
from app.config.settings import Settings
from domain.errors import CredentialsRefused, LoopError, MissingVariable
from domain.github_app import InstallationGrant
from domain.model import HarnessSpec, SessionRecord, SessionStatus
from domain.refs import RepoRef
from domain.slots import BoundFrom, session_bound
from domain.workspace import WorkspaceMode, clone_url

__all__ = [
    "Check",
    "DoctorProbe",
    "GitHubAppProbe",
    "Mark",
    "diagnose",
    "fit_checks",
    "parked_checks",
    "unconfigured_checks",
]


class DoctorProbe(HarnessProbe, Protocol):
    """What `doctor` asks the machine, and what the harness packages' own checks read (`HarnessProbe`);
    nothing it does changes anything.

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

    def git_remote(self, url: str, gh: str, env: Mapping[str, str] | None = None) -> str:
        """How the clone URL answers `git ls-remote` (https authenticated through `gh`; run in `env`,
        a GitHub App's token environment, when given, instead of doctor's own). `CredentialsRefused`
        when the remote refused the credentials git sent (HTTP 401)."""

    def writable(self, path: Path) -> str:
        """Whether `path` (or, when absent, the directory it would be created in) is writable."""

    def tmux_environment(self, socket_name: str | None) -> Mapping[str, str] | None:
        """The tmux server's global environment, which every pane inherits; None: no server runs."""

    def harness_version(self, binary: str, env: Mapping[str, str]) -> str:
        """The first line `binary --version` prints, found on and run with `env` (a pane's)."""

    def port_free(self, host: str, port: int) -> str:
        """Whether a server could listen on `host:port` now."""

    def memory_bytes(self) -> int | None:
        """The machine's memory in bytes; None when it cannot be read (never raises)."""


class GitHubAppProbe(Protocol):
    """What `doctor` asks of the GitHub App the configuration names (`integrations.github.app`); it
    changes nothing (a token it asks for is held in memory only and lapses within the hour).

    Failure modes: every method raises `LoopError` whose message is the cause (the key file unusable,
    GitHub refusing the JWT, no installation, gh failing); none raises anything else.
    """

    def key(self) -> str:
        """The key file: readable, its owner's alone (0600), an RSA private key."""

    def app(self) -> str:
        """GitHub takes a JWT signed with the key (`GET /app`): the App as GitHub names it."""

    def installation(self, repo: RepoRef) -> str:
        """The App's installation on `repo`, and that its token reads the repository."""

    def grant(self, repo: RepoRef) -> InstallationGrant:
        """What GitHub says the App's installation on `repo` was granted (`GET /app/installations/{id}`)."""

    def git_env(self, repo: RepoRef, *, refused: Mapping[str, str] | None = None) -> Mapping[str, str]:
        """The environment the daemon's git fetches `repo` in: its installation's token in place of
        gh's own login, which gh's credential helper answers git with. `refused`: one it gave whose
        token GitHub refused; the answer holds a new token."""


_REPO_FIX = "check its name in polling.sources, and that the gh account can read it"


def diagnose(
    settings: Settings,
    *,
    origin: str,
    probe: DoctorProbe,
    environ: Mapping[str, str] | None = None,
    app: GitHubAppProbe | None = None,
) -> Iterator[Check]:
    """Every check, in the order an operator would fix them; a missing binary skips what needs it.
    `environ` stands for the daemon's environment (doctor's own when not given); `app` is the GitHub
    App's side, asked when the configuration names one."""
    environ = dict(os.environ) if environ is None else environ
    yield Check(Mark.OK, "config", f"valid ({origin})")
    root = settings.state_root
    yield check(
        "state root", partial(probe.writable, root), f"make {root} a directory you can write, or set state.root"
    )
    tmux = check("tmux", partial(probe.version, "tmux"), "install tmux 3.3 or newer (apt install tmux)")
    yield tmux
    if tmux.mark is Mark.OK:
        socket = settings.tmux_socket
        server = f"tmux server (-L {socket})" if socket else "tmux server"
        yield check(
            server, partial(probe.tmux_server, socket), f"check `tmux {'-L ' + socket + ' ' if socket else ''}ls`"
        )
    yield _sessions(settings, probe)
    yield from _routing(settings)
    yield from _harnesses(settings, probe, environ, tmux_ok=tmux.mark is Mark.OK)
    yield from _webhook(settings, probe)
    yield from _spawn_workdir(settings)
    yield from _github(settings, probe, app)
    yield from _workspaces(settings, probe, app)


def _sessions(settings: Settings, probe: DoctorProbe) -> Check:
    """How many agents this host runs at once, and where that number came from (the daemon's own rule)."""
    bound = session_bound(settings.cluster.max_sessions, memory_bytes=probe.memory_bytes())
    mark = Mark.WARNING if bound.source is BoundFrom.UNKNOWN else Mark.OK
    return Check(mark, "max sessions", bound.said(), "set cluster.maxSessions to the agents this host bears at once")


def _routing(settings: Settings) -> Iterator[Check]:
    """Which agent an item gets, as the rules say it, in their order."""
    rules = settings.routing.rules
    if not rules:
        return
    said = []
    for index, rule in enumerate(rules):
        covers = " and ".join(
            part for part in (", ".join(rule.repos), " or ".join(f"label {label}" for label in rule.labels)) if part
        )
        mode = f" ({rule.permission_mode})" if rule.permission_mode else ""
        workspace = f" in workspace {rule.workspace}" if rule.workspace else ""
        said.append(f"rules[{index}]: {covers or 'every item'} → {rule.harness}{mode}{workspace}")
    default = settings.routing.default_harness
    said.append(f"else → {default}" if default else "else: no agent (an item no rule covers waits, told once)")
    if default == "demo":
        said[-1] += " (the demo harness: no agent works on what the rules leave)"
    mark = Mark.OK if default and default != "demo" else Mark.WARNING
    fix = (
        'set routing.defaultHarness to an agent (or "" to leave uncovered items waiting), or end the rules with '
        "one that covers every item"
    )
    yield Check(mark, "routing", "; ".join(said), fix)


def _harnesses(settings: Settings, probe: DoctorProbe, environ: Mapping[str, str], *, tmux_ok: bool) -> Iterator[Check]:
    """Each harness this configuration starts, as its panes will start it: in the tmux
    server's environment (which outlives daemon restarts) with its `env` and `passEnv` laid over."""
    server: Mapping[str, str] | None = None
    if tmux_ok:
        try:
            server = probe.tmux_environment(settings.tmux_socket)
        except LoopError:
            server = None  # the tmux server check above says what is wrong
    own = doctors()
    for name in settings.startable_harnesses:
        spec = settings.harness_spec(name)
        # the package whose hooks it is handed, else the one its binary is named for
        yield from _harness(spec, probe, environ, server, own.get(spec.hooks) or own.get(Path(spec.binary).name))


def _harness(
    spec: HarnessSpec,
    probe: DoctorProbe,
    environ: Mapping[str, str],
    server: Mapping[str, str] | None,
    own: HarnessDoctor | None,
) -> Iterator[Check]:
    """Its environment, its binary found and its version, then its package's own checks."""
    subject, key = f"harness {spec.name}", f"routing.harnesses.{spec.name}"
    try:
        given = spec.environment(environ)
    except MissingVariable as error:
        detail = str(error).split(": ", 1)[1]
        fix = f"set them in the daemon's environment (systemd: Environment= in its unit), or drop them from {key}"
        yield Check(Mark.FAILED, f"{subject} environment", detail, fix)
        return
    if given:  # names only: the values may be keys
        names = ", ".join(name for name, _ in given)
        yield Check(Mark.OK, f"{subject} environment", f"every spawn gets {names} (tmux -e)")
    pane = {**(environ if server is None else server), **dict(given)}
    where = "the tmux server's PATH" if server is not None else "the daemon's PATH"
    fix = (
        f"install it for the daemon's user so it is on {where}, or set {key}.binary to its absolute path"
        + (f" ({own.install_docs})" if own is not None and own.install_docs else "")
        + (
            "; the running tmux server keeps the environment it started with: set PATH in "
            f"{key}.env, or restart the server when no session runs"
            if server is not None
            else ""
        )
    )
    version = check(subject, partial(probe.harness_version, spec.binary, pane), fix)
    yield version
    if version.mark is Mark.FAILED:
        return
    if own is not None:
        yield from own.checks(Found(spec, version.detail, pane, dict(given), environ, server, probe))


def _webhook(settings: Settings, probe: DoctorProbe) -> Iterator[Check]:
    hook = settings.webhooks.gh_webhook
    if not hook.enabled:
        return
    secret = hook.secret.get_secret_value() if hook.secret is not None else ""
    if secret:  # the configuration refuses an enabled receiver without one; said here as a check
        yield Check(Mark.OK, "webhook secret", "set (webhooks.ghWebhook.secret)")
    else:
        yield Check(
            Mark.FAILED,
            "webhook secret",
            "not set",
            "set webhooks.ghWebhook.secret (THE_LOOP_WEBHOOKS__GH_WEBHOOK__SECRET)",
        )
    yield check(
        f"webhook port {hook.host}:{hook.port}",
        partial(probe.port_free, hook.host, hook.port),
        "stop what listens there (unless it is this daemon, already serving), or set webhooks.ghWebhook.port",
    )


def _spawn_workdir(settings: Settings) -> Iterator[Check]:
    """Items sharing one folder share one checkout, each agent editing under the others' feet (the
    sandbox demo's items only talk, so its folder may be shared)."""
    if not any(source.provider != "sandbox" for source in settings.sources()):
        return
    workdir = settings.routing.spawn_workdir
    if "{slug}" not in workdir:
        yield Check(
            Mark.FAILED,
            "spawnWorkdir",
            f"{workdir!r} has no {{slug}}: the agents of all the items would work in one folder",
            "put {slug} in routing.spawnWorkdir, e.g. ~/the-loop/work/{slug}",
        )
    for name, workspace in settings.routing.workspaces.items():
        key = f"routing.workspaces.{name}.spawnWorkdir"
        if "{slug}" not in workspace.spawn_workdir:
            yield Check(
                Mark.FAILED,
                key,
                f"{workspace.spawn_workdir!r} has no {{slug}}: the agents of all its items would work in one folder",
                f"put {{slug}} in {key}, e.g. ~/the-loop/work/{{slug}}",
            )


def _github(settings: Settings, probe: DoctorProbe, app: GitHubAppProbe | None) -> Iterator[Check]:
    gh = settings.integrations.github.cli.binary
    repos = [source.repo for source in settings.sources() if source.provider == "github"]
    if not repos:
        yield Check(Mark.SKIPPED, "gh", "not needed: no github source configured")
    else:
        installed = check(
            "gh", partial(probe.version, gh), "install gh (apt install gh), or set integrations.github.cli.binary"
        )
        yield installed
        if installed.mark is Mark.FAILED:
            return
        if settings.integrations.github.app is not None:
            yield from _github_app(settings, app, repos)
            return
        for host in sorted({repo.host for repo in repos}):
            yield check(f"gh auth {host}", partial(probe.gh_auth, gh, host), f"gh auth login --hostname {host}")
        for repo in repos:
            yield check(f"repository {repo}", partial(probe.repo_visible, gh, repo), _REPO_FIX)
    for source in settings.sources():
        if source.provider == "sandbox":
            yield Check(Mark.OK, f"repository {source.repo}", "sandbox (local, always visible)")


def _github_app(settings: Settings, app: GitHubAppProbe | None, repos: list[RepoRef]) -> Iterator[Check]:
    """The App's key, then GitHub taking its JWT, then its installation on each repository: each
    needs the one before. gh's own login is not used in App mode."""
    configured = settings.integrations.github.app
    assert configured is not None
    if app is None:
        yield Check(Mark.WARNING, "github app key", "not checked here", "run `the-loop doctor`")
        return
    key_file = configured.private_key_file
    key = check(
        "github app key",
        app.key,
        f"chmod 600 {key_file}, or set integrations.github.app.privateKeyFile to the App's .pem",
    )
    yield key
    if key.mark is Mark.FAILED:
        return
    fix = "check integrations.github.app.id and that the key is one of the App's (its settings page, Private keys)"
    accepted = check(f"github app {configured.id}", app.app, fix + ", and this machine's clock")
    yield accepted
    if accepted.mark is Mark.FAILED:
        return
    install = "install the App on it (its settings page, Install App), or correct integrations.github.app.installations"
    said: set[int] = set()
    for repo in repos:
        installed = check(f"repository {repo}", partial(app.installation, repo), install)
        yield installed
        if installed.mark is Mark.OK:
            yield from _granted(app, repo, said)


def _granted(app: GitHubAppProbe, repo: RepoRef, said: set[int]) -> Iterator[Check]:
    """The permissions of the installation on `repo`, once per installation."""
    try:
        grant = app.grant(repo)
    except LoopError as error:
        fix = "check that this machine reaches GitHub, and run doctor again"
        yield Check(Mark.FAILED, f"installation of {repo} permissions", str(error), fix)
        return
    if grant.installation not in said:
        said.add(grant.installation)
        yield from grant_checks(grant)


def _workspaces(settings: Settings, probe: DoctorProbe, app: GitHubAppProbe | None) -> Iterator[Check]:
    """With worktrees: git itself, and the clone URL of each repository a worktree is cut from."""
    clones = _clones(settings)
    if not clones:
        return
    git = check("git", partial(probe.version, "git"), "install git (apt install git)")
    yield git
    if git.mark is Mark.FAILED:
        return
    gh = settings.integrations.github.cli.binary
    # as a GitHub App, the daemon's git fetches with the installation's token, not gh's own login
    as_app = app if settings.integrations.github.app is not None else None
    reads = (
        "the App's installation holds Contents: Read-only" if as_app else "gh is logged in and can read the repository"
    )
    for (template, repo), key in clones.items():
        subject = f"clone {repo}" if key == DEFAULT_WORKSPACE else f"clone {repo} ({key})"
        fix = f"check {key}.cloneUrl; for https, that {reads}"
        yield check(subject, partial(_remote, probe, template, repo, gh, as_app), fix)


DEFAULT_WORKSPACE = "routing.workspace"


def _clones(settings: Settings) -> dict[tuple[str, RepoRef], str]:
    """Each clone URL and repository a worktree may be cut from, with the workspace that says so:
    the default's for every watched repository, a named one's for those its rules cover."""
    repos = list(dict.fromkeys(source.repo for source in settings.sources()))
    clones: dict[tuple[str, RepoRef], str] = {}
    if settings.routing.workspace.mode is WorkspaceMode.WORKTREE:
        clones.update({(settings.routing.workspace.clone_url, repo): DEFAULT_WORKSPACE for repo in repos})
    for name, workspace in settings.routing.workspaces.items():
        rules = [rule for rule in settings.routing_rules if rule.workspace == name]
        if workspace.mode is not WorkspaceMode.WORKTREE:
            continue
        for repo in repos:
            if any(not rule.repos or any(pattern.matches(repo) for pattern in rule.repos) for rule in rules):
                clones.setdefault((workspace.clone_url, repo), f"routing.workspaces.{name}")
    return clones


def _remote(probe: DoctorProbe, template: str, repo: RepoRef, gh: str, app: GitHubAppProbe | None) -> str:
    try:
        url = clone_url(template, repo)
    except ValueError as error:
        raise LoopError(str(error)) from None
    # as the daemon's fetch: the App's token only to https on the repository's own host, and a token
    # GitHub refuses replaced once
    if app is None or not url.startswith("https://") or not repo.served_at(url):
        return probe.git_remote(url, gh)
    env = app.git_env(repo)
    try:
        return probe.git_remote(url, gh, env)
    except CredentialsRefused:
        return probe.git_remote(url, gh, app.git_env(repo, refused=env))


def unconfigured_checks(settings: Settings, records: Iterable[SessionRecord]) -> Iterator[Check]:
    """An item keeps the harness of its first spawn: one whose harness the configuration defines no
    more is not started (its comments wait) until a start names another. One line each; a closed
    item's is said when it is watched again."""
    known = set(settings.harness_names)
    choices = ", ".join(settings.startable_harnesses)
    for record in records:
        if record.harness in known or record.status is SessionStatus.CLOSED:
            continue
        yield Check(
            Mark.WARNING,
            f"agent of {record.item}",
            f"its harness {record.harness} is in the configuration no more: its agent is not started nor written "
            "to, and its comments wait",
            f"write `the-loop start <harness>` on it, or run `the-loop sessions start --work-item {record.item} "
            f"--harness <harness>` (<harness>: {choices}); or define routing.harnesses.{record.harness} again",
        )


def fit_checks(records: Iterable[SessionRecord], memory_bytes: int | None) -> Iterator[Check]:
    """How many agents of each harness this host's memory holds, from what agents held at their turns'
    ends: the median of the figures the records keep, one an item, its agent's last. An item hibernated
    or closed since keeps the figure its agent took awake, which is what an agent of it takes again;
    an item given another harness keeps none. Said only for harnesses measured."""
    measured: dict[str, list[int]] = {}
    for record in records:
        if record.rss_bytes:
            measured.setdefault(record.harness, []).append(record.rss_bytes)
    for harness, sizes in sorted(measured.items()):
        each = statistics.median_low(sizes)
        fits = f"{memory_bytes // each} fit in {memory_bytes / 1024**3:.0f} GiB" if memory_bytes else "memory unread"
        yield Check(
            Mark.OK,
            f"agents that fit ({harness})",
            f"{fits} at {each // 1024**2} MiB each (the median of {len(sizes)} measured at a turn's end)",
        )


def parked_checks(records: Iterable[SessionRecord]) -> Iterator[Check]:
    """An item whose agent the API refused (its credentials) waits for the operator: one line each,
    with how the harness package of the agent's name renews them, where it says."""
    own = doctors()
    for record in records:
        parked = record.park
        if parked is None or parked.resuming or not parked.cause.waits_for_operator:
            continue
        renew = own[record.harness].credentials if record.harness in own else ""
        yield Check(
            Mark.FAILED,
            f"agent credentials ({record.item})",
            f"the API refused the {record.harness} agent's credentials (authentication_failed) since "
            f"{parked.since:%Y-%m-%d %H:%M:%S} UTC; the item is parked",
            f"renew the harness's API key or login{f' ({renew})' if renew else ''}, "
            f"then write `the-loop resume` on {record.item}",
        )
