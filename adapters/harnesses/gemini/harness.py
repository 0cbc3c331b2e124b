"""Gemini CLI's registration: the-loop's extension in its folder, as it finds it at the spawn (no
permission hook answers a dialog: its requests are answered in the pane)."""

from adapters.harnesses.gemini.hooks import receipt_channel
from adapters.harnesses.registration import Registration

HARNESS = Registration(channel=lambda folder, _ask_wait_seconds: receipt_channel(folder))
