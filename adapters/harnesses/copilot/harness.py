"""GitHub Copilot CLI's registration: its hooks in a plugin handed with `--plugin-dir`, its trusted
folders in `~/.copilot/config.json`."""

from adapters.agents.registration import Registration
from adapters.harnesses.copilot.hooks import receipt_channel
from adapters.harnesses.copilot.trust import CopilotTrust

HARNESS = Registration(channel=lambda folder, _ask_wait_seconds: receipt_channel(folder), trust=CopilotTrust)
