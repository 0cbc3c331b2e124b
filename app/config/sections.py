"""The blocks of the configuration file, one model each: keys, defaults, meanings, checks."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, AliasChoices, BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic.alias_generators import to_camel

from app.config.harnesses import (
    PERMISSION_MODES,
    HarnessSettings,
    PermissionMode,
    check_harnesses,
    merge_harnesses,
)
from domain.budget import DEFAULT_RATE_FLOOR
from domain.model import SpawnMode
from domain.refs import DEFAULT_HOST, RepoRef
from domain.routing import RepoPattern
from domain.workspace import DEFAULT_CLONE_URL, DEFAULT_KEEP_IGNORED, WorkspaceMode, check_clone_url

SLUG_PLACEHOLDER = "{slug}"  # in a spawn folder: the item's slug
_LOGIN = re.compile(r"[A-Za-z0-9_.\[\]-]+")  # GitHub's, an Enterprise's `_shortcode`, an app's `[bot]`
_USER_HOST = re.compile(r"[A-Za-z0-9.-]+(?::[0-9]{1,5})?")
GitHubReaction = Literal["+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"]


def _repo_text(text: str) -> str:
    RepoRef.parse(text)  # raises InvalidRef, a ValueError: pydantic names the key
    return text.strip()


def _user_entry(text: str) -> str:
    host, _, login = text.strip().rpartition("/")
    if not _LOGIN.fullmatch(login) or (host and not _USER_HOST.fullmatch(host)):
        raise ValueError(f"must be a login, or host/login for a login on another GitHub host (got {text!r})")
    return text.strip()


def _socket_name(text: str) -> str:
    if text in {".", ".."} or not all(c.isalnum() or c in "._-" for c in text):
        raise ValueError(f"must be a plain name of letters, digits, '.', '_' or '-' (got {text!r})")
    return text


class Section(BaseModel):
    """A block of the YAML file: camelCase keys, unknown keys refused, immutable once read."""

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, frozen=True)


class StateSettings(Section):
    root: str = Field(
        default=".the-loop",
        description="Directory of the state store, event log, lock and heartbeat; relative to the working directory.",
    )
    backend: Literal["sqlite", "postgres"] = Field(
        default="sqlite",
        description="Where ledgers, sessions and cursors live: `sqlite` (one file under `root`) or `postgres` "
        "(the database `dsn` names; the event log, lock and heartbeat stay under `root`).",
    )
    dsn: SecretStr = Field(
        default=SecretStr(""),
        description="libpq connection string of the PostgreSQL database (`host=… port=… dbname=… user=…` or "
        "`postgresql://user@host:port/dbname`); a password is better left to `~/.pgpass` or `PGPASSWORD`. "
        "Required when `backend` is `postgres`; errors name its host, port and database, never its password.",
    )

    prune_margin_seconds: int = Field(
        default=3600,
        ge=60,
        description="How far a ledger's pruning horizon trails the start of its repository's last read that moved "
        "the cursor: the clock-skew allowance, and room for a tracker that lists a comment late. A comment written "
        "before the horizon is history even if no read returned it; keep the hour unless a benchmark compresses time.",
    )
    prune_pass_seconds: int = Field(
        default=600,
        ge=1,
        description="A pass of ledger pruning over every item begins at most this often (each cycle then looks at "
        "20 ledgers of it).",
    )

    @model_validator(mode="after")
    def _dsn_for_postgres(self) -> StateSettings:
        if self.backend == "postgres" and not self.dsn.get_secret_value().strip():
            raise ValueError("dsn: required when backend is postgres")
        return self


def _host_id(text: str) -> str:
    if text and (len(text) > 63 or text in {".", ".."} or not all(c.isalnum() or c in "._-" for c in text)):
        raise ValueError(f"must be a plain name of letters, digits, '.', '_' or '-', at most 63 (got {text!r})")
    return text


class ClusterSettings(Section):
    host_id: Annotated[str, AfterValidator(_host_id)] = Field(
        default="",
        description="This host's name among the hosts sharing one PostgreSQL database (`state.backend: postgres`); "
        "each host needs its own. Empty: the machine's hostname.",
    )
    max_sessions: int | None = Field(
        default=None,
        ge=1,
        description="Agents this host runs at once, alone or beside other hosts. An item holds a slot while its "
        "agent runs (its session not closed) or something waits for one; the rest wait, the one waiting longest "
        "(its oldest undelivered comment) first, said on the item once. Sharing the work, a new item goes to the "
        "live host with the most free slots. Unset: one per 2 GiB of the machine's memory, at least 1, at most "
        "20 (`doctor` says which).",
    )
    min_free_memory_mib: int | None = Field(
        default=None,
        ge=0,
        # MiB as the unit is written; the key as first generated (`minFreeMemoryMib`) is still read
        alias="minFreeMemoryMiB",
        validation_alias=AliasChoices("minFreeMemoryMiB", "minFreeMemoryMib"),
        description="Memory (`MemAvailable` of `/proc/meminfo`) this host keeps free: below it no new agent starts "
        "or resumes on this host — the longest-idle agent that can resume is hibernated to make room, and the items "
        "wait for a slot, their comments kept (`cluster.memory_low`); with several hosts its heartbeat says so and "
        "they go to a host whose memory admits them. Read again right before each new agent starts here: still "
        "short once the idlest agent is hibernated, it does not start and its item's slot is given back "
        "(`cluster.start_held`). Agents already running are never ended for it while they work. Unset: off.",
    )
    lease_seconds: float = Field(
        default=30,
        gt=0,
        description="How long a host's hold on a work item lasts after its last renewal, on the database's clock; "
        "a host that stops renewing (dead, cut off) loses its items to the others after this.",
    )
    renew_deadline_seconds: float = Field(
        default=20,
        gt=0,
        description="How long a host trusts its last renewal: past this, it touches none of its items' sessions "
        "until a renewal succeeds. Must be shorter than `leaseSeconds`; the difference bounds one tmux action. "
        "Renewals run every third of it.",
    )

    @model_validator(mode="after")
    def _deadline_before_expiry(self) -> ClusterSettings:
        if self.renew_deadline_seconds >= self.lease_seconds:
            raise ValueError(
                f"renewDeadlineSeconds: must be shorter than leaseSeconds ({self.renew_deadline_seconds:g} >= "
                f"{self.lease_seconds:g}): a host cut off from the database must stop before its items can be taken"
            )
        return self


class SourceSettings(Section):
    provider: Literal["github", "sandbox"] = Field(
        default="github", description="`github` (through `gh`) or `sandbox` (the embedded local tracker)."
    )
    repos: tuple[Annotated[str, AfterValidator(_repo_text)], ...] = Field(
        min_length=1, description="Repositories to watch: `owner/repo`, or `host/owner/repo` on another GitHub host."
    )
    label: str = Field(
        min_length=1, description="Only open issues and pull requests carrying this label are work items."
    )


class PollingSettings(Section):
    interval_seconds: int = Field(
        default=60, ge=1, description="Seconds between the end of one poll cycle and the start of the next."
    )
    max_retries: int = Field(
        default=3,
        ge=1,
        description="Failed delivery attempts of one comment before it is abandoned (and one notice posted).",
    )
    sources: tuple[SourceSettings, ...] = Field(
        default=(), description="What to watch; each entry: `provider`, `repos`, `label`."
    )


class TmuxSettings(Section):
    socket_name: Annotated[str, AfterValidator(_socket_name)] = Field(
        default="", description="tmux server name (`tmux -L`); empty: the default server."
    )
    remain_on_exit: bool = Field(
        default=True,
        description="Keep a session whose harness exited (pane dead) so its output stays readable. A hibernated "
        "agent's pane is removed all the same: the-loop ended it, and it holds nothing to read.",
    )
    resume_on_respawn: bool = Field(
        default=True, description="On respawn, resume the recorded conversation (harnesses with `resumeArgs` only)."
    )
    resume_probe_seconds: float = Field(
        default=3,
        ge=0,
        description="The `readySeconds` of harnesses without receipts that set none: how long a new or resumed "
        "harness must stay alive before it counts as ready (a resume that dies sooner falls back to a fresh "
        "conversation).",
    )
    kill_harness_on_close: bool = Field(
        default=True,
        description="When a work item closes, terminate its harness (SIGTERM, then SIGKILL after the grace).",
    )
    keep_session_on_close: bool = Field(
        default=True, description="When a work item closes, keep its tmux session so it can still be read."
    )
    harness_kill_grace_seconds: float = Field(
        default=10, ge=0, description="Seconds between SIGTERM and SIGKILL when terminating a harness."
    )


class ReactionSettings(Section):
    enabled: bool = Field(default=True, description="React on delivered comments at all.")
    started: GitHubReaction = Field(default="eyes", description="Reaction when the prompt went into the harness.")
    succeeded: GitHubReaction = Field(
        default="hooray", description="Reaction when the harness confirmed it got the prompt."
    )
    failed: GitHubReaction = Field(default="confused", description="Reaction when a delivery attempt failed.")
    turn_ended: GitHubReaction | None = Field(
        default="rocket",
        description="Reaction when the agent's turn for the comment ended (harnesses with receipts); null: none.",
    )
    control: GitHubReaction | None = Field(
        default="+1", description="Reaction when a control comment (`the-loop pause` …) was executed; null: none."
    )


class WorkspaceSettings(Section):
    mode: WorkspaceMode = Field(
        default=WorkspaceMode.NONE,
        description="`none`: each item's folder is created empty. `worktree`: it is a git worktree of the item's "
        "repository on branch `the-loop/<slug>` (an issue from the default branch's tip, a pull request from its "
        "head), cut from one shared clone per repository under `<state.root>/clones`; `spawnWorkdir` must "
        "contain `{slug}`. See docs/workspaces.md.",
    )
    clone_url: Annotated[str, AfterValidator(check_clone_url)] = Field(
        default=DEFAULT_CLONE_URL,
        description="Where the shared clone is fetched from; `{host}`, `{owner}`, `{repo}` are substituted. "
        "https goes through gh as git's credential helper (no token written anywhere); `file://` works too.",
    )
    setup: str = Field(
        default="",
        description="A shell command run once in each new worktree (e.g. `npm ci`); its exit status and the end "
        "of its output go to the event log. A failure discards the worktree and fails the attempt. Empty: none.",
    )
    setup_env: tuple[str, ...] = Field(
        default=(),
        description="Names of more environment variables `setup` gets. It gets only `PATH`, `HOME`, `LANG`, "
        "`LC_*`, `TERM`, `TMPDIR`, `USER`, `LOGNAME`, `SHELL` and these: never the daemon's tokens "
        "(`GH_TOKEN`, `GITHUB_TOKEN`, …).",
    )
    trust_forks: bool = Field(
        default=False,
        description="Run code from a fork's pull request on this host like the repository's own: `setup`, and the "
        "harness with its folder's own settings, hooks and MCP servers. Off: none of it runs unless the operator "
        "vouched for that head (`sessions vouch`). See docs/workspaces.md.",
    )
    remove_on_close: bool = Field(
        default=False,
        description="When a work item closes, remove its worktree and branch if clean: no uncommitted change, "
        "no untracked file, no edit hidden from git status, no ignored file worth keeping (`keepIgnored`), no "
        "commit missing from every remote branch, no live process inside. Otherwise it is kept, and the event "
        "log says why. `sessions prune` does the same for every closed session.",
    )
    keep_ignored: tuple[str, ...] = Field(
        default=DEFAULT_KEEP_IGNORED,
        description="Ignored files worth keeping: a worktree holding one is not clean (an `.env` written by hand "
        "is lost with the worktree). A pattern without a slash matches a name at any depth; a folder git ignores "
        "as a whole is not looked into. Other ignored files (`node_modules/`, build output) do not keep it; "
        "`sessions prune` names what went.",
    )


class NamedWorkspaceSettings(WorkspaceSettings):
    """One `routing.workspaces` entry: a workspace whole (a key it does not give has its own default,
    not `routing.workspace`'s), and where its items' folders go."""

    spawn_workdir: str = Field(
        description="Working directory of its items' sessions, as `routing.spawnWorkdir` says it (`{slug}` is the "
        "item's slug; created when missing).",
    )

    @model_validator(mode="after")
    def _one_worktree_per_item(self) -> NamedWorkspaceSettings:
        if self.mode is WorkspaceMode.WORKTREE and SLUG_PLACEHOLDER not in self.spawn_workdir:
            raise ValueError("spawnWorkdir: must contain {slug} when mode is worktree (each item needs its own folder)")
        return self


def _repo_pattern(text: str) -> str:
    RepoPattern.parse(text, host=DEFAULT_HOST)  # raises BadPattern, a ValueError: pydantic names the key
    return text.strip()


class RuleSettings(Section):
    """One `routing.rules` entry: which items it covers, and the agent they get."""

    repos: tuple[Annotated[str, AfterValidator(_repo_pattern)], ...] = Field(
        default=(),
        description="Repositories whose items it covers: `owner/repo` (on `integrations.github.host`) or "
        "`host/owner/repo`, each part a glob (`acme/*`, `acme/api-?`); any case. Empty: every repository.",
    )
    labels: tuple[str, ...] = Field(
        default=(), description="Labels, any one of which an item must carry (any case). Empty: any item."
    )
    harness: str = Field(description="The harness its items get: a built-in or a key of `routing.harnesses`.")
    permission_mode: PermissionMode | None = Field(
        default=None,
        description="Claude Code's `--permission-mode` for its items, over the harness's own `permissionMode` "
        "(only for a harness with `receipts: claude`).",
    )
    workspace: str = Field(
        default="",
        description="A key of `routing.workspaces`: its items' folders are made as that entry says (where, and "
        "what they hold) instead of by `routing.workspace` and `routing.spawnWorkdir`. Empty: by those.",
    )


UserEntry = Annotated[str, AfterValidator(_user_entry)]


class AuthorizeSettings(Section):
    permission: Literal["write", "maintain", "admin"] | None = Field(
        default=None,
        description="Who may steer by GitHub's own permissions: an author whose role on the item's repository "
        "(admin > maintain > write > triage > read) is at least this one, as GitHub answers "
        "`GET /repos/{owner}/{repo}/collaborators/{login}/permission`. A fork's author counts by what they hold "
        "on the repository the pull request is made to. An answer that cannot be read (an error, a 403) "
        "authorizes nobody, and is said (`authorize.lookup_failed`). Unset: only `users` steer.",
    )
    users: tuple[UserEntry, ...] = Field(
        default=(),
        description="Logins who steer whatever their permission, written as in `authorizedUsers` (both lists count).",
    )
    deny: tuple[UserEntry, ...] = Field(
        default=(),
        description="Logins who never steer, whatever their permission or either list says; written as in "
        "`authorizedUsers`.",
    )
    cache_seconds: int = Field(
        default=600,
        ge=0,
        description="How long the daemon keeps each permission it read (per host, repository and login) in memory. "
        "A webhook delivery of a `member`, `membership`, `organization` or `team` event drops what it may have "
        "changed at once. 0: asked for every batch of comments.",
    )


class RoutingSettings(Section):
    authorized_users: tuple[UserEntry, ...] = Field(
        default=(),
        description="GitHub logins whose comments become prompts; empty, with no `authorize.permission`, authorizes "
        "nobody. A login names a person on one host: `alice` is alice of `integrations.github.host`, "
        "`ghe.example.com/alice` alice of that host (a repository there is watched as `ghe.example.com/owner/repo`). "
        "With a `sandbox` source, a bare login also names that local tracker's user. The same list as "
        "`authorize.users`: both may be given.",
    )
    authorize: AuthorizeSettings = Field(
        default=AuthorizeSettings(),
        description="Who may prompt and use the control verbs, from GitHub's repository permissions, a list and a "
        "deny list (docs/steering.md).",
    )
    spawn_on_unmatched: SpawnMode = Field(
        default=SpawnMode.LABELED,
        description="When a new work item gets a session: `never`, `labeled` (has the source's label), `always`.",
    )
    default_harness: str = Field(
        default="demo",
        description="Harness of a new session no rule of `rules` covers; a built-in or a key of `harnesses`. "
        'Empty (`""`): only the rules pick, and an item none covers waits, told once on the item.',
    )
    rules: tuple[RuleSettings, ...] = Field(
        default=(),
        description="Which agent an item gets, in order: the first rule whose `repos` and `labels` match the item "
        "picks its harness (and overrides) and its workspace, else `defaultHarness` in `workspace`. An item keeps "
        "the harness and the workspace of its first spawn (a changed rule never moves a live conversation, nor its "
        "folder); `the-loop start <harness>` changes its harness, never its folder.",
    )
    harnesses: Annotated[dict[str, HarnessSettings], AfterValidator(check_harnesses)] = Field(
        default_factory=dict,
        description="Harness definitions by name, merged key by key over the built-ins (see below).",
    )
    ask_wait_seconds: float = Field(
        default=600,
        ge=0,
        description="How long a permission request of Claude Code, Codex or opencode (their hook, its plugin) waits "
        "for an answer from the item (`the-loop allow` / `deny` / `answer`, docs/harnesses.md) before it leaves the "
        "dialog to the pane; each request is posted on the item once. 0: requests are not posted, dialogs are "
        "answered in the pane only.",
    )
    hibernate_after_seconds: float | None = Field(
        default=None,
        gt=0,
        description="An agent idle this long — its turn ended, no comment, receipt or attached tmux client since, "
        "no dialog open, not parked — is ended to free its slot, its conversation kept; the item shows "
        "`hibernated`, and its next comment resumes the conversation (docs/operating.md). Harnesses that cannot "
        "resume are never hibernated. Unset: off.",
    )
    dispatch_timeout_seconds: float = Field(
        default=1800, gt=0, description="Timeout of every tmux call but the state probe."
    )
    max_concurrent_dispatches: int = Field(
        default=4, ge=1, description="Work items dispatched in parallel; comments of one item are always in order."
    )
    spawn_workdir: str = Field(
        default=".",
        description="Working directory of a new session; `{slug}` is replaced by the work item's slug. Created, "
        "with its parents (0755 less the umask), when missing; a path that is not a directory fails the spawn.",
    )
    trigger: str = Field(
        default="",
        description="When set (e.g. `@the-loop`), only comments holding it (any case) are delivered to the agent; "
        "the others are resolved as not for the agent. Empty: every authorized comment is a prompt.",
    )
    tmux: TmuxSettings = Field(default=TmuxSettings(), description="The tmux server and the session lifecycle.")
    reactions: ReactionSettings = Field(
        default=ReactionSettings(), description="Emoji reactions on the comments the-loop handles."
    )
    workspace: WorkspaceSettings = Field(
        default=WorkspaceSettings(), description="What each work item's folder holds: nothing, or a git worktree."
    )
    workspaces: dict[str, NamedWorkspaceSettings] = Field(
        default_factory=dict,
        description="More workspaces by name, for the items of a rule that names one (`rules[].workspace`): each "
        "has the keys of `workspace` and its own `spawnWorkdir`. See docs/workspaces.md.",
    )

    @model_validator(mode="after")
    def _default_harness_is_known(self) -> RoutingSettings:
        known = merge_harnesses(self.harnesses)
        if self.default_harness and self.default_harness not in known:
            raise ValueError(
                f"defaultHarness: unknown harness {self.default_harness!r} (known: {', '.join(sorted(known))})"
            )
        if not self.default_harness and not self.rules:
            raise ValueError('defaultHarness: empty ("": only the rules pick) but no `rules` are given')
        return self

    @model_validator(mode="after")
    def _rules_name_known_harnesses(self) -> RoutingSettings:
        known = merge_harnesses(self.harnesses)
        for index, rule in enumerate(self.rules):
            harness = known.get(rule.harness)
            if harness is None:
                raise ValueError(
                    f"rules[{index}].harness: unknown harness {rule.harness!r} (known: {', '.join(sorted(known))})"
                )
            if rule.permission_mode and harness.receipts not in PERMISSION_MODES:
                raise ValueError(
                    f"rules[{index}].permissionMode: only a harness whose hooks take one does "
                    f"(`receipts: {', '.join(sorted(PERMISSION_MODES))}`; {rule.harness!r} does not)"
                )
            if rule.permission_mode and any(a.split("=")[0] == "--permission-mode" for a in harness.args):
                raise ValueError(
                    f"rules[{index}].permissionMode: harnesses.{rule.harness}.args states --permission-mode "
                    "itself, which would stand over the rule's: drop it there (its `permissionMode` key gives it)"
                )
        return self

    @model_validator(mode="after")
    def _rules_name_known_workspaces(self) -> RoutingSettings:
        for index, rule in enumerate(self.rules):
            if rule.workspace and rule.workspace not in self.workspaces:
                known = f"known: {', '.join(sorted(self.workspaces))}" if self.workspaces else "none in `workspaces`"
                raise ValueError(f"rules[{index}].workspace: unknown workspace {rule.workspace!r} ({known})")
        return self

    @model_validator(mode="after")
    def _one_worktree_per_item(self) -> RoutingSettings:
        if self.workspace.mode is WorkspaceMode.WORKTREE and SLUG_PLACEHOLDER not in self.spawn_workdir:
            raise ValueError(
                "spawnWorkdir: must contain {slug} when workspace.mode is worktree (each item needs its own folder)"
            )
        return self


class GhWebhookSettings(Section):
    enabled: bool = Field(
        default=False,
        description="`poll` serves GitHub webhooks in addition to polling, in the same daemon (not with `--once`).",
    )
    host: str = Field(default="127.0.0.1", description="Address the webhook server binds.")
    port: int = Field(default=8787, ge=1, le=65535, description="Port the webhook server binds.")
    secret: SecretStr = Field(
        default=SecretStr(""),
        description="The webhook secret of the repositories' or organizations' webhooks; deliveries with a bad"
        " signature are refused. Required when enabled, unless the GitHub App's webhook is served alone"
        " (integrations.github.app.webhookSecret).",
    )
    max_body_bytes: int = Field(
        default=1024 * 1024,
        ge=1024,
        le=25 * 1024 * 1024,
        description="Largest delivery body read; a larger one is answered 413 before it is read. A comment"
        " event is at most ~0.6 MB (GitHub's own cap on any payload is 25 MB).",
    )
    read_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        le=300,
        description="Seconds a connection has to send its whole request; then it is answered 408 and closed.",
    )
    max_connections: int = Field(
        default=256,
        ge=1,
        le=4096,
        description="Connections open at once (idle ones included); one more is answered 503 and closed at"
        " once. Memory held is at most this times maxBodyBytes.",
    )
    inbox_max_comments: int = Field(
        default=1000,
        ge=1,
        le=1_000_000,
        description="Comments the inbox may hold when a delivery would add one; more are dropped"
        " (webhook.dropped, inbox-full) and come by polling instead.",
    )
    inbox_max_bytes: int = Field(
        default=16 * 1024 * 1024,
        ge=64 * 1024,
        le=1024 * 1024 * 1024,
        description="Bytes the inbox may hold when a delivery would add a comment; past them it is dropped likewise.",
    )
    unlisted_keep_seconds: float = Field(
        default=600.0,
        ge=0,
        le=7 * 24 * 3600,
        description="How long a kept comment of an item no read lists (labelled, not listed yet) is kept; a read"
        " of its repository then drops it. Nothing is lost: a listed item's arming read brings it back.",
    )


class WebhookSettings(Section):
    gh_webhook: GhWebhookSettings = Field(default=GhWebhookSettings(), description="The GitHub webhook receiver.")


_LOOPBACK = {"127.0.0.1", "::1", "localhost"}
_HOST_NAME = re.compile(r"(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?")


def _host_name(text: str) -> str:
    name = text.strip().lower()
    if not _HOST_NAME.fullmatch(name):
        raise ValueError(f"must be a host name or address, with a port or not, as in a URL (got {text!r})")
    return name


class UiSettings(Section):
    enabled: bool = Field(default=False, description="Serve the fleet page (docs/ui.md) beside the poller.")
    host: str = Field(
        default="127.0.0.1",
        min_length=1,
        description="Address the page binds; another than loopback only with a token.",
    )
    port: int = Field(default=8788, ge=0, le=65535, description="Port the page binds (0: any free port).")
    token: SecretStr = Field(
        default=SecretStr(""),
        description="When set, every request needs it (`Authorization: Bearer`, or the login form's cookie), and"
        " the page's actions (pause, resume, close, reopen, reset) are offered; empty: the page only shows.",
    )

    allowed_hosts: tuple[Annotated[str, AfterValidator(_host_name)], ...] = Field(
        default=(),
        description="Names the page is also reached by (a `Host` it answers), besides its own address, `localhost`,"
        " `127.0.0.1` and `[::1]` with its port: `fleet.example.org` (with the page's port, or none: a proxy in"
        " front) or `fleet.example.org:8443` (that port only). Any other name is answered 421, token or not:"
        " another site can point a name of its own at this machine (DNS rebinding).",
    )

    @model_validator(mode="after")
    def _loopback_without_token(self) -> UiSettings:
        if not self.token.get_secret_value() and self.host not in _LOOPBACK and not self.host.startswith("127."):
            raise ValueError(f"host: without ui.token only a loopback address may be bound (got {self.host!r})")
        return self


class GhCliSettings(Section):
    binary: str = Field(default="gh", description="The `gh` executable (a name on PATH or a path).")
    timeout_seconds: float = Field(
        default=60.0,
        gt=0,
        description="How long one `gh` call may take before it is killed and the repository counts as not read "
        "this cycle (the other repositories carry on; its comments come on the next read).",
    )


_INSTALLATION_KEY = re.compile(r"[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)?")


def _installation_key(text: str) -> str:
    if not _INSTALLATION_KEY.fullmatch(text.strip()) or text.strip() in {".", ".."}:
        raise ValueError(f"must be owner/repo or owner (got {text!r})")
    return text.strip()


class GitHubAppSettings(Section):
    id: int = Field(ge=1, description="The App's ID (on its settings page on GitHub).")
    private_key_file: str = Field(
        min_length=1,
        description="The App's private key, the `.pem` GitHub generates for it: mode 0600 (its owner alone may"
        " read it; anything else is refused at start, exit status 2). Read once at start, never logged, copied"
        " or written anywhere.",
    )
    installations: dict[Annotated[str, AfterValidator(_installation_key)], Annotated[int, Field(ge=1)]] = Field(
        default_factory=dict,
        description="The installation to act as, by `owner/repo` or `owner` (an organization or user the App is"
        " installed on); the repository's own entry wins. A watched repository not named is looked up"
        " (`GET /repos/{owner}/{repo}/installation`) once per process.",
    )
    webhook_secret: SecretStr = Field(
        default=SecretStr(""),
        description="The App's webhook secret (its settings page, **Webhook secret**): webhooks.ghWebhook then"
        " serves the App's deliveries for every installation, each signed with it (docs/github-app.md);"
        " empty: none are taken. Never logged.",
    )
    token_refresh_margin_seconds: float = Field(
        default=300,
        gt=0,
        le=1800,
        description="An installation token (GitHub's live an hour) is replaced this long before it expires;"
        " kept in memory only, never in the store or on disk.",
    )


class GitHubSettings(Section):
    cli: GhCliSettings = Field(default=GhCliSettings(), description="The GitHub CLI.")
    host: str = Field(
        default=DEFAULT_HOST,
        min_length=1,
        description="GitHub host of repositories named `owner/repo` (given to `gh` as `GH_HOST`).",
    )
    app: GitHubAppSettings | None = Field(
        default=None,
        description="Act as this GitHub App, each repository with its installation's token (docs/github-app.md);"
        " unset: as the account `gh` is logged in to.",
    )
    rate_floor: int = Field(
        default=DEFAULT_RATE_FLOOR,
        ge=0,
        description="Requests of a rate limit (the token's, or in App mode each installation's) kept for the"
        " notices, status replies and reactions the-loop must still make: a repository is not read while"
        " its limit has this many or fewer left, until its reset (docs/github-app.md, Rate limits); 0: reads"
        " stop only when none is left.",
    )


class IntegrationSettings(Section):
    github: GitHubSettings = Field(default=GitHubSettings(), description="GitHub.")


class EventLogSettings(Section):
    path: str = Field(default="", description="The JSONL event log; empty: `<state.root>/logs/events.jsonl`.")
    max_bytes: int = Field(
        default=16 * 1024 * 1024,
        ge=0,
        description="The log is rotated before a line would take it past this size (`events.jsonl` becomes "
        "`events.jsonl.1`, `.1` becomes `.2`, …); 0: never rotated. `events` reads across the rotated files.",
    )
    keep: int = Field(default=5, ge=1, description="Rotated files kept; the oldest beyond them is deleted.")
