"""Gemini CLI, first-class: its hooks from an extension of the-loop's own (`hooks`), their events
read as receipts beside every other harness's (`events`), what a turn cost read from its session
record (`usage`). Facts pinned against the real binary: tests/gemini/test_gemini_facts.py,
tests/gemini/test_gemini_usage_facts.py."""
