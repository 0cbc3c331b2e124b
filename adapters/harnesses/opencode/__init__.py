"""opencode, first-class: its receipts from a plugin the-loop hands it per spawn (`plugin`). Facts
pinned against the real binary: tests/opencode/test_opencode_facts.py."""
