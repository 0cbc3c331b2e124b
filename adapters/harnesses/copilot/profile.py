"""GitHub Copilot CLI's built-in profile (pinned in tests/copilot/test_copilot_facts.py): `-i PROMPT`
starts its interactive screen with the prompt submitted; `--session-id ID` starts a conversation
under the id the-loop chose and `--resume ID` continues it (an unknown id exits, saying nothing);
`--no-auto-update` keeps it at the version doctor checks. A never-seen folder asks "Confirm folder
trust" before any hook runs: the folder is recorded as trusted first."""

PROFILE = {
    "binary": "copilot",
    "args": ["--no-auto-update"],
    "sessionIdArgs": ["--session-id", "{session_id}", "-i"],
    "resumeArgs": ["--resume", "{session_id}", "-i"],
    "receipts": "copilot",
    "readySeconds": 30,
    "confirmSeconds": 30,
    "trustWorkdir": True,
}
PASTE_WHILE_BUSY = False  # a message typed during a turn joins it, with no prompt hook: paste when ready or idle
