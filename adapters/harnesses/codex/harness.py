"""Codex's registration: its hooks, trusted, with `-c`; its trusted folders in `$CODEX_HOME/config.toml`."""

from adapters.agents.registration import Registration
from adapters.harnesses.codex.hooks import receipt_channel
from adapters.harnesses.codex.trust import CodexTrust

HARNESS = Registration(
    channel=lambda folder, ask_wait_seconds: receipt_channel(folder, ask_wait_seconds=ask_wait_seconds),
    trust=CodexTrust,
)
