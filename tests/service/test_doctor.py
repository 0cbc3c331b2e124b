"""`doctor` over a fake machine: one line per check, the fix on each failure, skips where not needed."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from adapters.agents.pins import PINNED_CLAUDE_CODE, PINNED_CODEX, PINNED_COPILOT, PINNED_OPENCODE
from app.cli.doctor import Check, Mark, diagnose
from app.config.settings import Settings
from domain.errors import CredentialsRefused, LoopError
from domain.refs import RepoRef
from domain.slots import memory_total

GITHUB = {
    "polling": {"sources": [{"repos": ["o/a", "ghe.example/o/b"], "label": "loop"}]},
    "routing": {"spawnWorkdir": "/w/{slug}"},
}
SANDBOX = {"polling": {"sources": [{"provider": "sandbox", "repos": ["sandbox/demo"], "label": "loop"}]}}


class FakeMachine:
    """A machine where named things are missing or failing."""

    def __init__(
        self,
        *,
        missing: Collection[str] = (),
        logged_out: Collection[str] = (),
        hidden: Collection[str] = (),
        harness_path: str = "/usr/bin",  # where harness binaries are found
        files: Mapping[Path, Mapping[str, Any]] | None = None,  # JSON files by path
        server_env: Mapping[str, str] | None = None,  # the running tmux server's; None: none runs
        claude_version: str = PINNED_CLAUDE_CODE,
        codex_version: str = PINNED_CODEX,
        meminfo: str = "MemTotal:       24683772 kB\n",  # a stand-in /proc/meminfo: a 24 GiB machine
        opencode_version: str = PINNED_OPENCODE,
        copilot_version: str = PINNED_COPILOT,
        refused_tokens: Collection[str] = (),  # tokens a clone URL's remote refuses (HTTP 401)
    ) -> None:
        self.refused_tokens = refused_tokens
        self.meminfo = meminfo
        self.missing, self.logged_out, self.hidden = missing, logged_out, hidden
        self.harness_path, self.files, self.server_env = harness_path, dict(files or {}), server_env
        self.claude_version, self.codex_version = claude_version, codex_version
        self.opencode_version, self.copilot_version = opencode_version, copilot_version
        self.version_env: dict[str, Mapping[str, str]] = {}
        self.git_envs: dict[str, Mapping[str, str] | None] = {}  # clone URL -> the environment git was asked in

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

    def git_remote(self, url: str, gh: str, env: Mapping[str, str] | None = None) -> str:
        self.git_envs[url] = env
        if url in self.missing:
            raise LoopError(f"git ls-remote {url}: fatal: repository '{url}' not found")
        if env is not None and env.get("GH_TOKEN") in self.refused_tokens:
            raise CredentialsRefused(f"git ls-remote {url}: fatal: Authentication failed for '{url}/'")
        return f"{url} answers (default branch main)"

    def writable(self, path: Path) -> str:
        return f"{path} is writable"

    def tmux_environment(self, socket_name: str | None) -> Mapping[str, str] | None:
        return self.server_env

    def harness_version(self, binary: str, env: Mapping[str, str]) -> str:
        self.version_env[binary] = env
        if binary in self.missing or self.harness_path not in env.get("PATH", "").split(":"):
            raise LoopError(f"{binary} not found on the panes' PATH ({env.get('PATH', '')})")
        if Path(binary).name == "codex":
            return f"codex-cli {self.codex_version} ({self.harness_path}/{binary})"
        if Path(binary).name == "opencode":  # as each prints it (tests/<agent>/test_<agent>_facts.py)
            return f"{self.opencode_version} ({self.harness_path}/{binary})"
        if Path(binary).name == "copilot":
            return f"GitHub Copilot CLI {self.copilot_version}. ({self.harness_path}/{binary})"
        return f"{self.claude_version} (Claude Code) ({self.harness_path}/{binary})"

    def json_file(self, path: Path) -> Mapping[str, Any] | None:
        return self.files.get(path)

    def toml_file(self, path: Path) -> Mapping[str, Any] | None:
        return self.files.get(path)

    def file_writable(self, path: Path) -> str:
        if str(path) in self.missing:
            raise LoopError(f"{path.parent} is not writable")
        return f"{path} is writable"

    def port_free(self, host: str, port: int) -> str:
        if f"{host}:{port}" in self.missing:
            raise LoopError(f"cannot listen on {host}:{port}: Address already in use")
        return f"{host}:{port} is free"

    def memory_bytes(self) -> int | None:
        return memory_total(self.meminfo)


DAEMON = {"PATH": "/usr/bin:/bin", "HOME": "/home/loop"}


def checks(document: dict[str, Any], machine: FakeMachine, environ: Mapping[str, str] = DAEMON) -> list[Check]:
    return list(diagnose(Settings(**document), origin="loop.yaml", probe=machine, environ=environ))


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
        "max sessions",
        "harness demo",
        "gh",
        "gh auth ghe.example",
        "gh auth github.com",
        "repository o/a",
        "repository ghe.example/o/b",
    ]


def test_the_bound_on_agents_at_once_is_said_with_where_it_came_from() -> None:
    from_memory = next(c for c in checks(GITHUB, FakeMachine()) if c.subject == "max sessions")
    configured = next(
        c for c in checks({**GITHUB, "cluster": {"maxSessions": 3}}, FakeMachine()) if c.subject == "max sessions"
    )
    unknown = next(c for c in checks(GITHUB, FakeMachine(meminfo="")) if c.subject == "max sessions")

    assert from_memory.line() == "✓ max sessions: 12 (from 24 GiB memory)"
    assert configured.line() == "✓ max sessions: 3 (from configuration)"
    assert unknown.mark is Mark.WARNING and "cluster.maxSessions" in unknown.line()


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


API_WORKTREES = {
    **GITHUB,
    "routing": {
        "spawnWorkdir": "/w/{slug}",
        "workspaces": {"api": {"mode": "worktree", "spawnWorkdir": "/api/{slug}", "cloneUrl": "file:///m/{repo}"}},
        "rules": [{"repos": ["o/a"], "harness": "demo", "workspace": "api"}],
    },
}


def test_a_rules_worktree_workspace_has_git_and_the_clone_url_of_each_repository_it_covers_checked() -> None:
    found = checks(API_WORKTREES, FakeMachine(missing={"file:///m/a"}))

    assert [c.line() for c in found if c.subject == "git" or c.subject.startswith("clone ")] == [
        "✓ git: git 9.9",
        "✗ clone o/a (routing.workspaces.api): git ls-remote file:///m/a: fatal: repository 'file:///m/a' not "
        "found — fix: check routing.workspaces.api.cloneUrl; for https, that gh is logged in and can read the "
        "repository",
    ]  # o/b: no rule gives it that workspace, and the default makes no worktrees


def test_a_workspace_spawn_workdir_every_item_would_share_is_a_failure() -> None:
    routing = {"spawnWorkdir": "/w/{slug}", "workspaces": {"api": {"spawnWorkdir": "~/api"}}}
    document = {"polling": GITHUB["polling"], "routing": routing}
    assert failed_lines(checks(document, FakeMachine())) == [
        "✗ routing.workspaces.api.spawnWorkdir: '~/api' has no {slug}: the agents of all its items would work in "
        "one folder — fix: put {slug} in routing.workspaces.api.spawnWorkdir, e.g. ~/the-loop/work/{slug}"
    ]


CLAUDE = {**SANDBOX, "routing": {"defaultHarness": "claude"}}
KEPT = {"routing": {"defaultHarness": "claude", "harnesses": {"claude": {"env": {"DISABLE_AUTOUPDATER": "1"}}}}}
READY = {**SANDBOX, **KEPT}  # Claude Code kept at its version, as docs/claude-code-production.md says
ONBOARDED = {"hasCompletedOnboarding": True, "oauthAccount": {"emailAddress": "loop@example.com"}}
HOME_FILE = Path("/home/loop/.claude.json")


def failed_lines(found: list[Check]) -> list[str]:
    return [c.line() for c in found if c.mark in {Mark.FAILED, Mark.WARNING}]


def test_claude_missing_from_the_panes_path_is_a_failure_with_the_fix() -> None:
    found = checks(CLAUDE, FakeMachine(harness_path="/opt/claude/bin"))
    assert failed_lines(found) == [
        "✗ harness claude: claude not found on the panes' PATH (/usr/bin:/bin) — fix: install it for the daemon's "
        "user so it is on the daemon's PATH, or set routing.harnesses.claude.binary to its absolute path "
        "(docs/claude-code-production.md)"
    ]


def test_a_ready_claude_shows_its_version_onboarding_login_and_trust_writer() -> None:
    found = checks(READY, FakeMachine(files={HOME_FILE: ONBOARDED}))
    assert [c.line() for c in found if c.subject.startswith("harness")] == [
        "✓ harness claude environment: every spawn gets DISABLE_AUTOUPDATER (tmux -e)",
        f"✓ harness claude: {PINNED_CLAUDE_CODE} (Claude Code) (/usr/bin/claude)",
        "✓ harness claude autoupdater: off in every spawn (DISABLE_AUTOUPDATER)",
        "✓ harness claude onboarding: done (/home/loop/.claude.json)",
        "✓ harness claude login: an account (/home/loop/.claude.json)",
        "✓ harness claude trust: /home/loop/.claude.json is writable",
    ]


def test_the_panes_path_is_the_running_tmux_servers_not_the_daemons() -> None:
    machine = FakeMachine(files={HOME_FILE: ONBOARDED}, server_env={"PATH": "/bin", "HOME": "/home/loop"})
    (line,) = [c.line() for c in checks(CLAUDE, machine) if c.mark is Mark.FAILED]
    assert line.startswith("✗ harness claude: claude not found on the panes' PATH (/bin) — fix:")
    assert "the running tmux server keeps the environment it started with" in line


def test_another_claude_version_is_a_warning_naming_the_pinned_one() -> None:
    found = checks(READY, FakeMachine(files={HOME_FILE: ONBOARDED}, claude_version="2.9.0"))
    assert failed_lines(found) == [
        f"! harness claude version: 2.9.0, not {PINNED_CLAUDE_CODE}, the version whose behaviour the tests pin — "
        f"fix: install {PINNED_CLAUDE_CODE} (scripts/install_claude_code.py) and set DISABLE_AUTOUPDATER=1 in "
        "routing.harnesses.claude.env"
    ]


def test_claude_never_run_by_the_daemons_user_is_not_onboarded_nor_logged_in() -> None:
    lines = failed_lines(checks(READY, FakeMachine()))
    assert lines[0].startswith(
        "✗ harness claude onboarding: not done: /home/loop/.claude.json has no hasCompletedOnboarding — fix: run "
        "`claude` once as the daemon's user (HOME=/home/loop) and finish its questions; "
    )
    assert lines[1].startswith(
        "✗ harness claude login: no API key in the panes' environment and no account in /home/loop/.claude.json"
    )
    assert "routing.harnesses.claude.passEnv" in lines[1]


def test_an_api_key_claude_would_ask_about_is_a_failure_and_never_printed() -> None:
    document = {
        **SANDBOX,
        "routing": {
            "defaultHarness": "claude",
            "harnesses": {"claude": {"passEnv": ["ANTHROPIC_API_KEY"], "env": {"DISABLE_AUTOUPDATER": "1"}}},
        },
    }
    key = "sk-ant-" + "s" * 40 + "K" * 20
    environ = {**DAEMON, "ANTHROPIC_API_KEY": key}
    asked = checks(document, FakeMachine(files={HOME_FILE: {"hasCompletedOnboarding": True}}), environ)
    (line,) = failed_lines(asked)
    assert line.startswith("✗ harness claude login: ANTHROPIC_API_KEY is set but not approved")
    approved = {"hasCompletedOnboarding": True, "customApiKeyResponses": {"approved": [key[-20:]]}}
    found = checks(document, FakeMachine(files={HOME_FILE: approved}), environ)
    assert failed_lines(found) == []
    shown = [c.line() for c in found]
    assert "✓ harness claude environment: every spawn gets DISABLE_AUTOUPDATER, ANTHROPIC_API_KEY (tmux -e)" in shown
    assert not any(key[-20:] in c.line() for c in asked + found)


def test_a_harness_variable_the_daemon_lacks_is_a_failure_naming_it() -> None:
    document = {**SANDBOX, "routing": {"harnesses": {"demo": {"env": {"TOKEN": "${SECRET_TOKEN}"}}}}}
    assert failed_lines(checks(document, FakeMachine())) == [
        "✗ harness demo environment: env.TOKEN needs ${SECRET_TOKEN}: not set in the daemon's environment — fix: "
        "set them in the daemon's environment (systemd: Environment= in its unit), or drop them from "
        "routing.harnesses.demo"
    ]


def test_a_trust_writer_writing_where_the_panes_claude_does_not_read_is_a_failure() -> None:
    document = {
        **SANDBOX,
        "routing": {
            "defaultHarness": "claude",
            "harnesses": {"claude": {"env": {"CLAUDE_CONFIG_DIR": "/srv/claude", "DISABLE_AUTOUPDATER": "1"}}},
        },
    }
    found = checks(document, FakeMachine(files={Path("/srv/claude/.claude.json"): ONBOARDED}))
    assert failed_lines(found) == [
        "✗ harness claude trust: the-loop records trusted folders in /home/loop/.claude.json but the panes' Claude "
        "Code reads /srv/claude/.claude.json — fix: give the daemon and the panes the same HOME and CLAUDE_CONFIG_DIR"
    ]


def test_an_unwritable_claude_configuration_is_a_failure_of_the_trust_writer() -> None:
    found = checks(READY, FakeMachine(files={HOME_FILE: ONBOARDED}, missing={str(HOME_FILE)}))
    assert failed_lines(found) == [
        "✗ harness claude trust: /home/loop is not writable — fix: let the daemon's user write "
        "/home/loop/.claude.json and its folder, or set claude's trustWorkdir: false"
    ]


def test_an_enabled_webhook_needs_its_port_free() -> None:
    document = {**GITHUB, "webhooks": {"ghWebhook": {"enabled": True, "secret": "s3cret", "port": 9999}}}
    found = checks(document, FakeMachine(missing={"127.0.0.1:9999"}))
    assert "✓ webhook secret: set (webhooks.ghWebhook.secret)" in [c.line() for c in found]
    assert failed_lines(found) == [
        "✗ webhook port 127.0.0.1:9999: cannot listen on 127.0.0.1:9999: Address already in use — fix: stop what "
        "listens there (unless it is this daemon, already serving), or set webhooks.ghWebhook.port"
    ]
    assert not any("s3cret" in c.line() for c in found)


def test_a_spawn_workdir_every_item_would_share_is_a_failure() -> None:
    document = {"polling": GITHUB["polling"], "routing": {"spawnWorkdir": "~/agents"}}
    assert failed_lines(checks(document, FakeMachine())) == [
        "✗ spawnWorkdir: '~/agents' has no {slug}: the agents of all the items would work in one folder — fix: put "
        "{slug} in routing.spawnWorkdir, e.g. ~/the-loop/work/{slug}"
    ]


def test_doctor_says_which_item_waits_for_new_agent_credentials_and_how_to_resume_it() -> None:
    from datetime import UTC, datetime

    from app.cli.doctor import parked_checks
    from domain.model import SessionRecord
    from domain.park import Park, ParkCause
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


def test_a_parked_agent_is_told_only_its_own_harnesss_way_to_renew_its_credentials() -> None:
    from datetime import UTC, datetime

    from app.cli.doctor import parked_checks
    from domain.model import SessionRecord
    from domain.park import Park, ParkCause
    from domain.refs import WorkItemRef

    item = WorkItemRef.parse("github:acme/widgets#8")
    since = datetime(2026, 12, 1, 15, 0, tzinfo=UTC)

    (check,) = parked_checks(
        [SessionRecord(item, "opencode", "sid", "/w", park=Park(ParkCause.AUTHENTICATION, since, None))]
    )

    assert check.fix == "renew the harness's API key or login, then write `the-loop resume` on github:acme/widgets#8"


def test_doctor_names_each_item_whose_harness_the_configuration_has_no_more_and_what_to_do() -> None:
    from app.cli.doctor import unconfigured_checks
    from domain.model import SessionRecord, SessionStatus
    from domain.refs import WorkItemRef

    settings = Settings(**{**SANDBOX, "routing": {"defaultHarness": "claude"}})
    item = WorkItemRef.parse("github:acme/api#1")
    gone = SessionRecord(item, "hal", "sid", "/w")
    running = SessionRecord(WorkItemRef.parse("github:acme/api#2"), "claude", "sid", "/w")
    built_in = SessionRecord(WorkItemRef.parse("github:acme/api#3"), "codex", "sid", "/w")  # it still starts
    closed = SessionRecord(WorkItemRef.parse("github:acme/api#4"), "hal", "sid", "/w", status=SessionStatus.CLOSED)

    (check,) = unconfigured_checks(settings, [gone, running, built_in, closed])

    assert check.mark is Mark.WARNING
    assert check.line() == (
        "! agent of github:acme/api#1: its harness hal is in the configuration no more: its agent is not started "
        "nor written to, and its comments wait — fix: write `the-loop start <harness>` on it, or run `the-loop "
        "sessions start --work-item github:acme/api#1 --harness <harness>` (<harness>: claude); or define "
        "routing.harnesses.hal again"
    )


CODEX = {**SANDBOX, "routing": {"defaultHarness": "codex"}}
CODEX_AUTH, CODEX_CONFIG = Path("/home/loop/.codex/auth.json"), Path("/home/loop/.codex/config.toml")


def codex_lines(found: list[Check]) -> list[str]:
    return [c.line() for c in found if c.subject.startswith("harness codex")]


def test_doctor_shows_a_ready_codex_its_pinned_version_its_sign_in_and_its_trust_writer() -> None:
    signed_in = {"auth_mode": "apikey", "OPENAI_API_KEY": "sk-" + "s" * 40}
    found = checks(CODEX, FakeMachine(files={CODEX_AUTH: signed_in}))
    assert codex_lines(found) == [
        f"✓ harness codex: codex-cli {PINNED_CODEX} (/usr/bin/codex)",
        "✓ harness codex login: an API key (/home/loop/.codex/auth.json)",
        "✓ harness codex trust: /home/loop/.codex/config.toml is writable",
    ]
    assert not any("sssss" in c.line() for c in found)


def test_another_codex_version_is_a_warning_naming_the_pinned_one() -> None:
    chatgpt = {"auth_mode": "chatgpt", "tokens": {"id_token": "x"}}
    found = checks(CODEX, FakeMachine(files={CODEX_AUTH: chatgpt}, codex_version="0.170.1"))
    assert failed_lines(found) == [
        f"! harness codex version: 0.170.1, not {PINNED_CODEX}, the version whose behaviour the tests pin — "
        f"fix: install {PINNED_CODEX} (scripts/install_codex.py)"
    ]
    assert "✓ harness codex login: signed in with ChatGPT (/home/loop/.codex/auth.json)" in codex_lines(found)


def test_a_codex_never_signed_in_is_a_failure_with_the_fix() -> None:
    (line,) = failed_lines(checks(CODEX, FakeMachine()))
    assert line == (
        "✗ harness codex login: not signed in: no /home/loop/.codex/auth.json and no model provider with an env_key "
        "in /home/loop/.codex/config.toml — fix: run `codex login` (or `codex login --with-api-key`, the key on "
        "stdin) as the daemon's user (CODEX_HOME=/home/loop/.codex)"
    )


def test_a_codex_model_provider_reading_its_key_from_the_environment_needs_that_variable_in_the_panes() -> None:
    config = {"model_provider": "corp", "model_providers": {"corp": {"base_url": "http://x", "env_key": "CORP_KEY"}}}
    document = {**SANDBOX, "routing": {"defaultHarness": "codex", "harnesses": {"codex": {"passEnv": ["CORP_KEY"]}}}}
    lacking = checks(document, FakeMachine(files={CODEX_CONFIG: config}), {**DAEMON})
    assert failed_lines(lacking)[0].startswith("✗ harness codex environment: passEnv CORP_KEY")
    found = checks(document, FakeMachine(files={CODEX_CONFIG: config}), {**DAEMON, "CORP_KEY": "secret-corp"})
    assert "✓ harness codex login: an API key (CORP_KEY) for model provider corp" in codex_lines(found)
    alone = checks(CODEX, FakeMachine(files={CODEX_CONFIG: config}))
    assert failed_lines(alone) == [
        "✗ harness codex login: model provider corp reads its key from CORP_KEY, which is not in the panes' "
        "environment — fix: add CORP_KEY to routing.harnesses.codex.passEnv"
    ]
    assert not any("secret-corp" in c.line() for c in found)


def test_a_codex_login_kept_in_the_keyring_is_a_warning_it_cannot_be_read_offline() -> None:
    found = checks(CODEX, FakeMachine(files={CODEX_CONFIG: {"cli_auth_credentials_store": "keyring"}}))
    assert failed_lines(found) == [
        "! harness codex login: kept in the system keyring (cli_auth_credentials_store in "
        "/home/loop/.codex/config.toml), not readable here — fix: check `codex login status` as the daemon's user"
    ]


def test_a_codex_trust_writer_writing_where_the_panes_codex_does_not_read_is_a_failure() -> None:
    document = {
        **SANDBOX,
        "routing": {"defaultHarness": "codex", "harnesses": {"codex": {"env": {"CODEX_HOME": "/srv/cx"}}}},
    }
    found = checks(document, FakeMachine(files={Path("/srv/cx/auth.json"): {"OPENAI_API_KEY": "sk-x"}}))
    assert failed_lines(found) == [
        "✗ harness codex trust: the-loop records trusted folders in /home/loop/.codex/config.toml but the panes' "
        "Codex reads /srv/cx/config.toml — fix: give the daemon and the panes the same HOME and CODEX_HOME"
    ]


OPENCODE = {**SANDBOX, "routing": {"defaultHarness": "opencode"}}
COPILOT = {**SANDBOX, "routing": {"defaultHarness": "copilot"}}


def test_an_opencode_at_its_pinned_version_passes() -> None:
    found = checks(OPENCODE, FakeMachine())
    assert [c.line() for c in found if c.subject.startswith("harness opencode")] == [
        f"✓ harness opencode: {PINNED_OPENCODE} (/usr/bin/opencode)"
    ]


def test_another_opencode_version_is_a_warning_naming_the_pinned_one() -> None:
    found = checks(OPENCODE, FakeMachine(opencode_version="1.19.0"))
    assert failed_lines(found) == [
        f"! harness opencode version: 1.19.0, not {PINNED_OPENCODE}, the version whose behaviour the tests pin — "
        f"fix: install {PINNED_OPENCODE} (scripts/install_opencode.py)"
    ]


def test_a_copilot_at_its_pinned_version_passes() -> None:
    found = checks(COPILOT, FakeMachine())
    assert failed_lines(found) == []
    assert f"✓ harness copilot: GitHub Copilot CLI {PINNED_COPILOT}. (/usr/bin/copilot)" in [c.line() for c in found]


def test_another_copilot_version_is_a_warning_naming_the_pinned_one() -> None:
    found = checks(COPILOT, FakeMachine(copilot_version="1.0.110"))
    assert failed_lines(found) == [
        f"! harness copilot version: 1.0.110, not {PINNED_COPILOT}, the version whose behaviour the tests pin — "
        f"fix: install {PINNED_COPILOT} (scripts/install_copilot.py)"
    ]


GEMINI = {**SANDBOX, "routing": {"defaultHarness": "gemini"}}
GEMINI_SETTINGS = Path("/home/loop/.gemini/settings.json")


def test_a_gemini_with_no_sign_in_chosen_fails_naming_the_setting() -> None:
    assert failed_lines(checks(GEMINI, FakeMachine())) == [
        "✗ harness gemini sign-in: none chosen in /home/loop/.gemini/settings.json: Gemini opens its authentication "
        "dialog at each start, and says it is ready while the dialog waits — fix: run `gemini` once as the daemon's "
        "user (HOME=/home/loop) and choose one, or set security.auth.selectedType (e.g. gemini-api-key) there"
    ]


def test_a_harness_of_the_operators_own_running_gemini_without_its_hooks_is_checked_for_a_sign_in() -> None:
    document = {**SANDBOX, "routing": {"defaultHarness": "plain", "harnesses": {"plain": {"binary": "gemini"}}}}
    (line,) = failed_lines(checks(document, FakeMachine()))
    assert line.startswith("✗ harness plain sign-in: none chosen in /home/loop/.gemini/settings.json")


def test_a_gemini_with_its_sign_in_chosen_passes() -> None:
    chosen = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    found = checks(GEMINI, FakeMachine(files={GEMINI_SETTINGS: chosen}))
    assert "✓ harness gemini sign-in: gemini-api-key (/home/loop/.gemini/settings.json)" in [c.line() for c in found]
    assert failed_lines(found) == []


def test_claude_whose_spawns_keep_the_autoupdater_on_is_a_failure_with_the_fix() -> None:
    found = checks(CLAUDE, FakeMachine(files={HOME_FILE: ONBOARDED}))
    assert failed_lines(found) == [
        "✗ harness claude autoupdater: on: Claude Code updates itself while it runs, to a version nobody tested "
        'with the-loop — fix: set DISABLE_AUTOUPDATER: "1" in routing.harnesses.claude.env '
        "(docs/claude-code-production.md)"
    ]


def test_claude_with_the_autoupdater_off_in_every_spawn_passes() -> None:
    found = checks(READY, FakeMachine(files={HOME_FILE: ONBOARDED}))
    assert failed_lines(found) == []
    assert "✓ harness claude autoupdater: off in every spawn (DISABLE_AUTOUPDATER)" in [c.line() for c in found]


def test_an_autoupdater_off_only_in_the_tmux_servers_environment_is_a_warning() -> None:
    server = {**DAEMON, "DISABLE_AUTOUPDATER": "1"}
    found = checks(CLAUDE, FakeMachine(files={HOME_FILE: ONBOARDED}, server_env=server))
    (line,) = failed_lines(found)
    assert line.startswith("! harness claude autoupdater: off only in the running tmux server's environment")


def test_a_first_run_that_cannot_reach_the_service_is_explained_and_doctor_fix_offered() -> None:
    found = checks(READY, FakeMachine())
    onboarding = next(c for c in found if c.subject == "harness claude onboarding")
    assert "cannot reach Anthropic's service" in onboarding.fix and "the-loop doctor --fix" in onboarding.fix
    assert onboarding.repair is not None and onboarding.repair.path == HOME_FILE


def test_every_harness_a_routing_rule_can_pick_is_checked_and_the_rules_are_said_in_order() -> None:
    rules = [
        {"repos": ["acme/api"], "harness": "claude", "permissionMode": "plan"},
        {"labels": ["codex"], "harness": "codex", "workspace": "review"},
    ]
    workspaces = {"review": {"spawnWorkdir": "/review/{slug}"}}
    document = {**SANDBOX, "routing": {"defaultHarness": "", "rules": rules, "workspaces": workspaces}}

    found = checks(document, FakeMachine(missing={"codex"}))

    routing = next(c for c in found if c.subject == "routing")
    assert routing.mark is Mark.WARNING  # no default: an item no rule covers waits
    assert routing.detail.startswith(
        "rules[0]: acme/api → claude (plan); rules[1]: label codex → codex in workspace review; else: no"
    )
    harnesses = {c.subject: c.mark for c in found if c.subject.startswith("harness ") and " " not in c.subject[8:]}
    assert harnesses["harness claude"] is Mark.OK and harnesses["harness codex"] is Mark.FAILED
    assert "harness demo" not in harnesses  # no default harness to check


def test_doctor_says_how_many_agents_of_each_harness_fit_from_what_they_held_at_their_turns_end() -> None:
    from app.cli.doctor import fit_checks
    from domain.model import SessionRecord
    from domain.refs import WorkItemRef

    def held(number: int, harness: str, mib: int | None) -> SessionRecord:
        ref = WorkItemRef.parse(f"github:acme/widgets#{number}")
        return SessionRecord(ref, harness, "c", "/w", rss_bytes=mib * 1024**2 if mib else None)

    records = [held(1, "claude", 600), held(2, "claude", 800), held(3, "claude", 700), held(4, "codex", 200),
               held(5, "cursor", None)]  # fmt: skip

    lines = [check.line() for check in fit_checks(records, 24 * 1024**3)]

    assert len(lines) == 2
    assert "agents that fit (claude)" in lines[0] and "35 fit in 24 GiB at 700 MiB each" in lines[0]
    assert "(the median of 3 measured at a turn's end)" in lines[0]
    assert "agents that fit (codex)" in lines[1] and "122 fit in 24 GiB at 200 MiB each" in lines[1]
