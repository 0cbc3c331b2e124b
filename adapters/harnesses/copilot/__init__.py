"""GitHub Copilot CLI, first-class: its hooks from a plugin the-loop hands each spawn (`hooks`),
trusted folders in its user configuration (`trust`). Facts pinned against the real binary, offline
on a custom model provider: tests/copilot/test_copilot_facts.py."""
