"""Codex, first-class: its hooks handed on the command line (`hooks`), trusted folders in its user
configuration (`trust`). Facts pinned against the real binary: tests/codex/test_codex_facts.py."""
