"""Codex's own checks in `doctor`: the pinned version, signed in as far as its files say offline, and
trust written where the panes' Codex reads it; never a secret printed."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from adapters.agents.agent_config import codex_config_file, codex_home
from adapters.agents.doctor import Check, Found, HarnessDoctor, Mark, pinned_version, trust_writable
from adapters.agents.pins import PINNED_CODEX
from domain.errors import LoopError


def checks(found: Found) -> Iterator[Check]:
    words = found.version.split()  # `codex-cli 0.169.0`
    version = words[1] if len(words) > 1 and words[0] == "codex-cli" else ""
    yield from pinned_version(found, version, PINNED_CODEX, f"install {PINNED_CODEX} (scripts/install_codex.py)")
    home = codex_home(found.pane)
    try:
        config = found.probe.toml_file(codex_config_file(found.pane)) or {}
        auth = found.probe.json_file(home / "auth.json")
    except LoopError as error:
        yield Check(Mark.FAILED, f"{found.subject} login", str(error), f"fix or remove it (in {home})")
        return
    yield _login(found, home=home, config=config, auth=auth)
    if found.spec.trust_workdir:
        writer, reader = codex_config_file(found.daemon), codex_config_file(found.pane)
        yield trust_writable(found, writer=writer, reader=reader, agent="Codex", variable="CODEX_HOME")


DOCTOR = HarnessDoctor(checks)


def _login(found: Found, *, home: Path, config: Mapping[str, Any], auth: Mapping[str, Any] | None) -> Check:
    subject, binary = f"{found.subject} login", found.spec.binary
    provider = str(config.get("model_provider") or "")
    providers = config.get("model_providers")
    entry = providers.get(provider) if isinstance(providers, dict) else None
    variable = str(entry.get("env_key") or "") if isinstance(entry, dict) else ""
    if variable:  # a provider of the user's own, keyed by a variable: no sign-in
        if found.pane.get(variable):
            return Check(Mark.OK, subject, f"an API key ({variable}) for model provider {provider}")
        return Check(
            Mark.FAILED,
            subject,
            f"model provider {provider} reads its key from {variable}, which is not in the panes' environment",
            f"add {variable} to {found.key}.passEnv",
        )
    path = home / "auth.json"
    if auth is not None and (auth.get("OPENAI_API_KEY") or auth.get("tokens")):
        how = "an API key" if auth.get("OPENAI_API_KEY") else "signed in with ChatGPT"
        return Check(Mark.OK, subject, f"{how} ({path})")
    if config.get("cli_auth_credentials_store") == "keyring":
        return Check(
            Mark.WARNING,
            subject,
            f"kept in the system keyring (cli_auth_credentials_store in {home / 'config.toml'}), not readable here",
            f"check `{binary} login status` as the daemon's user",
        )
    return Check(
        Mark.FAILED,
        subject,
        f"not signed in: no {path} and no model provider with an env_key in {home / 'config.toml'}",
        f"run `{binary} login` (or `{binary} login --with-api-key`, the key on stdin) as the daemon's user "
        f"(CODEX_HOME={home})",
    )
