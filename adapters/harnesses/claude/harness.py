"""Claude Code's registration: its hooks handed by `--settings`, its trusted folders in `~/.claude.json`."""

from adapters.agents.registration import Registration
from adapters.harnesses.claude.hooks import receipt_channel
from adapters.harnesses.claude.trust import ClaudeTrust

HARNESS = Registration(
    channel=lambda folder, ask_wait_seconds: receipt_channel(folder, ask_wait_seconds=ask_wait_seconds),
    trust=ClaudeTrust,
)
