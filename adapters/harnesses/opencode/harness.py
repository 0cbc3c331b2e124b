"""opencode's registration: its plugins in `$OPENCODE_CONFIG_CONTENT`."""

from adapters.harnesses.opencode.plugin import receipt_channel
from adapters.harnesses.registration import Registration

HARNESS = Registration(channel=lambda folder, _ask_wait_seconds: receipt_channel(folder))
