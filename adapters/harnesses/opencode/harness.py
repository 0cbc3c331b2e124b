"""opencode's registration: its plugins in `$OPENCODE_CONFIG_CONTENT`."""

from adapters.agents.registration import Registration
from adapters.harnesses.opencode.plugin import receipt_channel

HARNESS = Registration(channel=lambda folder, _ask_wait_seconds: receipt_channel(folder))
