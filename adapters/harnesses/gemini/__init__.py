"""Gemini CLI, first-class: its hooks from an extension of the-loop's own (`hooks`), their events
read as receipts beside every other harness's (`events`). Facts pinned against the real binary:
tests/gemini/test_gemini_facts.py."""
