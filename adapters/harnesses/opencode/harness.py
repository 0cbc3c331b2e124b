"""opencode's registration: its plugins in `$OPENCODE_CONFIG_CONTENT`; the plugin waits
`routing.askWaitSeconds` for the answer to a permission request."""

from adapters.agents.registration import Registration
from adapters.harnesses.opencode.plugin import receipt_channel

HARNESS = Registration(
    channel=lambda folder, ask_wait_seconds: receipt_channel(folder, ask_wait_seconds=ask_wait_seconds)
)
