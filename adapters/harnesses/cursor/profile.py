"""Cursor's CLI, as it is: no receipts, no resume (docs/harnesses.md)."""

PROFILE = {"binary": "cursor-agent"}
