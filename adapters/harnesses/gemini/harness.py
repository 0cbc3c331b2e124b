"""Gemini CLI's registration: the-loop's extension in its folder, as it finds it at the spawn (no
permission hook answers a dialog: its requests are answered in the pane)."""

from adapters.agents.registration import Registration
from adapters.harnesses.gemini.hooks import receipt_channel

HARNESS = Registration(channel=lambda folder, _ask_wait_seconds: receipt_channel(folder))
