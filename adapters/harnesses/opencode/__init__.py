"""opencode, first-class: its receipts from a plugin the-loop hands it per spawn (`plugin`), what a
turn cost from its own store (`usage`). Facts pinned against the real binary:
tests/opencode/test_opencode_facts.py, tests/opencode/test_opencode_usage_facts.py."""
