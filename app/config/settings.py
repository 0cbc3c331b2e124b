"""The operator's configuration: every key with its default, meaning and checks (docs/config.md)."""

from __future__ import annotations

import socket
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator, model_validator
from pydantic.alias_generators import to_camel
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from app.config.env import LoopEnvironment
from app.config.harnesses import (
    BUILTIN_HARNESSES,
    JOINS_RUNNING_TURN,
    SESSION_RULES,
    HarnessSettings,
    merge_harnesses,
)
from app.config.sections import (
    SLUG_PLACEHOLDER,
    ClusterSettings,
    EventLogSettings,
    IntegrationSettings,
    PollingSettings,
    RoutingSettings,
    StateSettings,
    UiSettings,
    WebhookSettings,
)
from app.config.spending import BudgetSettings, PricingSettings
from domain.authorize import Authorized, Permission
from domain.cluster import LeaseTiming
from domain.errors import MissingVariable
from domain.model import HarnessSpec, Reaction, Source, SpawnMode
from domain.receipts import ReceiptMode
from domain.refs import DEFAULT_HOST, RepoRef, WorkItemRef
from domain.routing import RepoPattern, Rule
from domain.spending import Budget

PYTHON_PLACEHOLDER = "{python}"

# What runs with no config file at all: a sandbox anyone can try, on a private tmux server.
EMBEDDED_DEFAULTS: Mapping[str, Any] = {
    "polling": {
        "intervalSeconds": 5,
        "sources": [{"provider": "sandbox", "repos": ["sandbox/demo"], "label": "loop"}],
    },
    "routing": {"authorizedUsers": ["demo"], "tmux": {"socketName": "the-loop-demo"}},
}


class Settings(BaseSettings):
    """Everything the-loop is configured with; environment (`THE_LOOP_…`) wins over the file."""

    model_config = SettingsConfigDict(extra="forbid", alias_generator=to_camel, frozen=True)

    state: StateSettings = Field(default=StateSettings(), description="Where the-loop keeps its state.")
    cluster: ClusterSettings = Field(
        default=ClusterSettings(),
        description="Several hosts sharing the work through PostgreSQL (see docs/cluster.md).",
    )
    polling: PollingSettings = Field(default=PollingSettings(), description="What is watched and how often.")
    routing: RoutingSettings = Field(
        default=RoutingSettings(), description="Who may prompt, which harness runs, and how sessions live."
    )
    webhooks: WebhookSettings = Field(default=WebhookSettings(), description="Push delivery.")
    ui: UiSettings = Field(default=UiSettings(), description="The fleet page.")
    integrations: IntegrationSettings = Field(default=IntegrationSettings(), description="External tools.")
    event_log: EventLogSettings = Field(default=EventLogSettings(), description="The append-only event log.")
    pricing: PricingSettings = Field(
        default=PricingSettings(), description="What models' tokens cost, over the pinned table (docs/costs.md)."
    )
    budgets: tuple[BudgetSettings, ...] = Field(
        default=(),
        description="Allowances of money or tokens; once one is spent the comments it covers wait (docs/costs.md).",
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # the YAML document arrives as init kwargs; listing the environment first makes it win.
        # Our own source: pydantic-settings' loses either the prefix of aliased keys or JSON lists.
        return LoopEnvironment(settings_cls), init_settings

    @model_validator(mode="after")
    def _webhook_secret_when_enabled(self) -> Settings:
        app = self.integrations.github.app
        hook = self.webhooks.gh_webhook
        if hook.enabled and not hook.secret.get_secret_value() and not (app and app.webhook_secret.get_secret_value()):
            raise ValueError(
                "webhooks.ghWebhook.secret: required when enabled, unless integrations.github.app.webhookSecret is"
                " set (unsigned deliveries would be accepted)"
            )
        return self

    @field_validator("budgets")
    @classmethod
    def _budgets_named_once(cls, budgets: tuple[BudgetSettings, ...]) -> tuple[BudgetSettings, ...]:
        """A budget is named by its scope and match (`the-loop budget raise day`): two alike could not be told apart."""
        seen: dict[str, int] = {}
        for index, entry in enumerate(budgets):
            key = entry.budget.key
            if key in seen:
                raise ValueError(f"[{index}]: the same scope and match as [{seen[key]}] ({key}); give one allowance")
            seen[key] = index
        return budgets

    @property
    def budget_list(self) -> tuple[Budget, ...]:
        return tuple(entry.budget for entry in self.budgets)

    # -- what the use cases need ----------------------------------------------------------

    @property
    def authorized_users(self) -> frozenset[str]:
        """`routing.authorizedUsers` and `routing.authorize.users`: one list."""
        return frozenset((*self.routing.authorized_users, *self.routing.authorize.users))

    @property
    def authorized(self) -> Authorized:
        """`routing.authorize` with `routing.authorizedUsers` as its users, a bare login on
        `integrations.github.host` (and in the sandbox tracker, when a source uses it: its items carry
        the default host, its logins are local)."""
        sandbox = [DEFAULT_HOST] if any(s.provider == "sandbox" for s in self.polling.sources) else []
        rule = self.routing.authorize
        return Authorized.parse(
            sorted(self.authorized_users),
            host=self.integrations.github.host,
            also=sandbox,
            deny=rule.deny,
            permission=None if rule.permission is None else Permission(rule.permission),
        )

    @property
    def spawn_mode(self) -> SpawnMode:
        return self.routing.spawn_on_unmatched

    @property
    def state_root(self) -> Path:
        return Path(self.state.root).expanduser()

    @property
    def event_log_path(self) -> Path:
        if self.event_log.path:
            return Path(self.event_log.path).expanduser()
        return self.state_root / "logs" / "events.jsonl"

    @property
    def host_id(self) -> str:
        """`cluster.hostId`, or the machine's name."""
        return self.cluster.host_id or socket.gethostname().split(".")[0] or "localhost"

    @property
    def lease_timing(self) -> LeaseTiming:
        return LeaseTiming(self.cluster.lease_seconds, self.cluster.renew_deadline_seconds)

    @property
    def tmux_socket(self) -> str | None:
        return self.routing.tmux.socket_name or None

    @property
    def harness_names(self) -> tuple[str, ...]:
        return tuple(sorted(merge_harnesses(self.routing.harnesses)))

    @property
    def routing_rules(self) -> tuple[Rule, ...]:
        """`routing.rules` as the domain matches them: a bare `owner/repo` is on `integrations.github.host`."""
        host = self.integrations.github.host
        return tuple(
            Rule(
                harness=rule.harness,
                repos=tuple(RepoPattern.parse(text, host=host) for text in rule.repos),
                labels=frozenset(label.casefold() for label in rule.labels),
                permission_mode=rule.permission_mode or "",
                workspace=rule.workspace,
            )
            for rule in self.routing.rules
        )

    @property
    def routed_harnesses(self) -> tuple[str, ...]:
        """Every harness a new session can get: the default's, then each rule's, once each."""
        named = [self.routing.default_harness, *(rule.harness for rule in self.routing.rules)]
        return tuple(dict.fromkeys(name for name in named if name))

    @property
    def startable_harnesses(self) -> tuple[str, ...]:
        """Every harness this configuration can start: those routed to, then those it defines (what
        `doctor` checks, and what `the-loop start <harness>` may name)."""
        return tuple(dict.fromkeys([*self.routed_harnesses, *self.routing.harnesses]))

    def harness_spec(self, name: str | None = None, *, permission_mode: str = "") -> HarnessSpec:
        """The harness `name` (default: `routing.defaultHarness`), with `permission_mode` over its own
        when given; `LookupError` if unknown."""
        name = name or self.routing.default_harness
        harness = merge_harnesses(self.routing.harnesses).get(name)
        if harness is not None and permission_mode:
            harness = harness.model_copy(update={"permission_mode": permission_mode})
        if harness is None or harness.binary is None:
            raise LookupError(f"unknown harness {name!r} (known: {', '.join(self.harness_names)})")
        ready = harness.ready_seconds
        if ready is None:
            ready = 60.0 if harness.receipt_mode is not ReceiptMode.NONE else self.routing.tmux.resume_probe_seconds
        return HarnessSpec(
            name=name,
            binary=harness.binary.replace(PYTHON_PLACEHOLDER, sys.executable),
            args=(*harness.args, *_permission_args(harness)),
            session_id_args=harness.session_id_args,
            resume_args=harness.resume_args if self.routing.tmux.resume_on_respawn else (),
            submit_delay_ms=harness.submit_delay_ms,
            enter_retries=harness.enter_retries,
            blocked_screens=harness.blocked_screens,
            receipts=harness.receipt_mode,
            hooks=harness.receipts if harness.receipt_mode is ReceiptMode.HOOKS else "",
            ready_seconds=ready,
            confirm_seconds=harness.confirm_seconds,
            trust_workdir=harness.trust_workdir,
            session_rules=harness.receipts in SESSION_RULES,
            paste_while_busy=harness.receipts not in JOINS_RUNNING_TURN,
            unvouched_args=harness.unvouched_args,
            env=tuple(harness.env.items()),
            pass_env=harness.pass_env,
        )

    def missing_variables(self, environ: Mapping[str, str]) -> list[str]:
        """For each harness whose `env` or `passEnv` needs a variable `environ` lacks, the
        `routing.harnesses.<name>` line naming them (never a value)."""
        problems = []
        for name in self.harness_names:
            try:
                self.harness_spec(name).environment(environ)
            except MissingVariable as error:
                problems.append(f"routing.harnesses.{name}: {str(error).split(': ', 1)[1]}")
        return problems

    def sources(self) -> list[Source]:
        """One `Source` per repository; `owner/repo` is on `integrations.github.host`."""
        host = self.integrations.github.host
        return [
            Source(
                provider=s.provider,
                repo=RepoRef.parse(text, host=host if s.provider == "github" else DEFAULT_HOST),
                label=s.label,
            )
            for s in self.polling.sources
            for text in s.repos
        ]

    def spawn_workdir(self, item: WorkItemRef, workspace: str = "") -> str:
        """The absolute working directory of `item`'s session, in the workspace `workspace` names
        ("", or one configured no more: `routing.spawnWorkdir`)."""
        named = self.routing.workspaces.get(workspace) if workspace else None
        template = named.spawn_workdir if named is not None else self.routing.spawn_workdir
        return str(Path(template.replace(SLUG_PLACEHOLDER, item.slug)).expanduser().absolute())

    def reaction_content(self, reaction: Reaction) -> str | None:
        """GitHub's reaction content for `reaction`, or None when reactions are disabled."""
        config = self.routing.reactions
        if not config.enabled:
            return None
        return {
            Reaction.STARTED: config.started,
            Reaction.SUCCEEDED: config.succeeded,
            Reaction.FAILED: config.failed,
            Reaction.TURN_ENDED: config.turn_ended,
            Reaction.CONTROL: config.control,
        }[reaction]


__all__ = ["BUILTIN_HARNESSES", "EMBEDDED_DEFAULTS", "HarnessSettings", "Settings"]


def _permission_args(harness: HarnessSettings) -> tuple[str, ...]:
    """`permissionMode` as Claude Code's flag, unless the operator's `args` state a mode already
    (a config written before the key): theirs stands."""
    stated = any(a == "--permission-mode" or a.startswith("--permission-mode=") for a in harness.args)
    return ("--permission-mode", harness.permission_mode) if harness.permission_mode and not stated else ()
