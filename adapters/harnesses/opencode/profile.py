"""opencode's built-in profile: receipts from a plugin, resume by the id its ready receipt gave (the
plugin submits the prompt the TUI drops on a resume; tests/opencode/test_opencode_facts.py)."""

PROFILE = {
    "binary": "opencode",
    "sessionIdArgs": ["--prompt"],
    "resumeArgs": ["--session", "{session_id}", "--prompt"],
    "receipts": "opencode",
    "readySeconds": 30,
    "confirmSeconds": 30,
}
# its plugin answers a permission request with opencode's own "always" (the patterns opencode
# offers, for as long as that opencode runs: tests/opencode/test_opencode_permission_facts.py)
SESSION_RULES = True
