"""Claude Code's own checks in `doctor`: its updates kept off, its pinned version, past onboarding and
logged in as far as its configuration says offline, and its trust writer; never a secret printed."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adapters.agents.agent_config import claude_config_file
from adapters.agents.doctor import Check, Found, HarnessDoctor, Mark, pinned_version, trust_writable
from adapters.agents.pins import PINNED_CLAUDE_CODE
from domain.errors import LoopError

_TRUTHY = {"1", "true", "yes", "on"}  # how Claude Code reads DISABLE_AUTOUPDATER (read from the 2.1.328 binary)
_PRODUCTION = "docs/claude-code-production.md"


@dataclass(frozen=True, slots=True)
class FirstRunRepair:
    """What Claude Code's first run records in its configuration, for one that cannot finish by
    hand: its onboarding (its connectivity check reaches Anthropic's own hosts, which a machine
    behind a gateway or without outside network cannot) and, for an API key, the key's approval."""

    path: Path
    approve: str = field(default="", repr=False)  # the key's last 20 characters, as Claude records them; never shown

    def says(self) -> str:
        key = " and the panes' ANTHROPIC_API_KEY as approved (its last 20 characters)" if self.approve else ""
        return f"record Claude Code's first run done (hasCompletedOnboarding){key} in {self.path}"


def checks(found: Found) -> Iterator[Check]:
    yield _autoupdater(found)
    words = found.version.split()  # `2.1.328 (Claude Code)`
    install = f"install {PINNED_CLAUDE_CODE} (scripts/install_claude_code.py)"
    fix = f"{install} and set DISABLE_AUTOUPDATER=1 in {found.key}.env"
    yield from pinned_version(found, words[0] if words else "", PINNED_CLAUDE_CODE, fix)
    yield from _login(found)


DOCTOR = HarnessDoctor(
    checks, install_docs=_PRODUCTION, credentials="for Claude Code: ANTHROPIC_API_KEY, or `claude /login`"
)


def _autoupdater(found: Found) -> Check:
    """Claude Code updates itself while it runs unless its spawn says not to: above all a daemon's
    agent must stay at the version doctor checked (docs/claude-code-production.md)."""
    subject = f"{found.subject} autoupdater"
    fix = f'set DISABLE_AUTOUPDATER: "1" in {found.key}.env ({_PRODUCTION})'
    inherited = found.daemon if found.server is None else found.server
    if found.given.get("DISABLE_AUTOUPDATER", "").strip().lower() in _TRUTHY:
        return Check(Mark.OK, subject, "off in every spawn (DISABLE_AUTOUPDATER)")
    if "DISABLE_AUTOUPDATER" not in found.given and inherited.get("DISABLE_AUTOUPDATER", "").strip().lower() in _TRUTHY:
        where = "the running tmux server's" if found.server is not None else "the daemon's"
        detail = f"off only in {where} environment: a tmux server started again without it updates every new agent"
        return Check(Mark.WARNING, subject, detail, fix)
    detail = "on: Claude Code updates itself while it runs, to a version nobody tested with the-loop"
    return Check(Mark.FAILED, subject, detail, fix)


def _login(found: Found) -> Iterator[Check]:
    """Past onboarding and logged in, as far as the files say offline; never a secret printed."""
    spec, pane, subject = found.spec, found.pane, found.subject
    path = claude_config_file(pane)
    first_run = f"run `{spec.binary}` once as the daemon's user (HOME={pane.get('HOME', '~')}) and finish its questions"
    try:
        config = found.probe.json_file(path) or {}
    except LoopError as error:
        yield Check(Mark.FAILED, f"{subject} onboarding", str(error), f"fix or remove {path}")
        return
    onboarded = config.get("hasCompletedOnboarding") is True
    key = pane.get("ANTHROPIC_API_KEY", "")
    unapproved = key[-20:] if key and key[-20:] not in _approved(config) else ""
    repair = FirstRunRepair(path, approve=unapproved) if unapproved or not onboarded else None
    if onboarded:
        yield Check(Mark.OK, f"{subject} onboarding", f"done ({path})")
    else:
        fix = (
            f"{first_run}; a first run that cannot reach Anthropic's service (no outside network, only a gateway) "
            "stops at 'Unable to connect to Anthropic services': `the-loop doctor --fix` records it done instead, "
            "with your consent"
        )
        detail = f"not done: {path} has no hasCompletedOnboarding"
        yield Check(Mark.FAILED, f"{subject} onboarding", detail, fix, repair)
    yield _auth(subject, path, config, pane, first_run, repair=repair)
    if spec.trust_workdir:
        # the daemon writes trust where its own environment says
        writer = claude_config_file(found.daemon)
        yield trust_writable(found, writer=writer, reader=path, agent="Claude Code", variable="CLAUDE_CONFIG_DIR")


def _approved(config: Mapping[str, Any]) -> list[str]:
    responses = config.get("customApiKeyResponses")
    approved = responses.get("approved", []) if isinstance(responses, dict) else []
    return approved if isinstance(approved, list) else []


def _auth(
    subject: str,
    path: Path,
    config: Mapping[str, Any],
    pane: Mapping[str, str],
    first_run: str,
    *,
    repair: FirstRunRepair | None,
) -> Check:
    key = pane.get("ANTHROPIC_API_KEY", "")
    if key:
        if key[-20:] in _approved(config):
            return Check(Mark.OK, f"{subject} login", "an API key (ANTHROPIC_API_KEY), approved")
        return Check(
            Mark.FAILED,
            f"{subject} login",
            f"ANTHROPIC_API_KEY is set but not approved in {path}: Claude Code would ask about it",
            first_run
            + " (answer yes to the API key), or `the-loop doctor --fix` records it approved, with your consent",
            repair,
        )
    for variable in ("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
        if pane.get(variable):
            return Check(Mark.OK, f"{subject} login", f"a token ({variable})")
    if config.get("oauthAccount") or config.get("primaryApiKey"):
        return Check(Mark.OK, f"{subject} login", f"an account ({path})")
    return Check(
        Mark.FAILED,
        f"{subject} login",
        f"no API key in the panes' environment and no account in {path}",
        f"add ANTHROPIC_API_KEY to {subject.replace('harness ', 'routing.harnesses.')}.passEnv, or {first_run} "
        "and log in (/login)",
    )
