"""Codex's built-in profile: hooks as receipts, trusted folders, resume by the id its ready receipt
gave (pinned in tests/codex/test_codex_facts.py). Its permission hook refuses an allow with a rule
for the session and opens its own dialog (tests/codex/test_codex_permission_facts.py)."""

PROFILE = {
    "binary": "codex",
    "resumeArgs": ["resume", "{session_id}"],
    "receipts": "codex",
    "readySeconds": 30,
    "confirmSeconds": 30,
    "trustWorkdir": True,
}
