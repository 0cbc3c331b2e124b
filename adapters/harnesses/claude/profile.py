"""Claude Code's built-in profile (what each key does and leaves out: docs/harnesses.md)."""

# auto mode's dialog when its safety check cannot reach its service: Enter chooses "stay in auto
# mode" (its text pinned in tests/claude/test_claude_permission_facts.py)
AUTO_MODE_CHECK_DIALOG = "Auto mode's safety check runs on the server"

PROFILE = {
    "binary": "claude",
    "sessionIdArgs": ["--session-id", "{session_id}"],
    "resumeArgs": ["--resume", "{session_id}"],
    "receipts": "claude",
    "readySeconds": 60,
    "confirmSeconds": 30,
    "trustWorkdir": True,
    # chosen on purpose: `auto`, what Claude Code runs without the flag; `default` would ask
    # before each risky tool (docs/claude-code.md); `init` asks the operator which
    "permissionMode": "auto",
    # pinned in tests/claude/test_claude_unvouched_facts.py
    "unvouchedArgs": ["--setting-sources", "user", "--strict-mcp-config"],
    "blockedScreens": [AUTO_MODE_CHECK_DIALOG],
}
# its permission hook takes an allow with a rule for the session (tests/claude/test_claude_permission_facts.py)
SESSION_RULES = True
PERMISSION_MODE = True  # it takes `--permission-mode`
