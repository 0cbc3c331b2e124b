"""Gemini CLI's built-in profile: hooks as receipts from an extension of the-loop's own (`hooks`)."""

PROFILE = {
    "binary": "gemini",
    "args": ["--skip-trust"],
    "sessionIdArgs": ["--session-id", "{session_id}", "--prompt-interactive"],
    "resumeArgs": ["--resume", "{session_id}", "--prompt-interactive"],
    "submitDelayMs": 3000,
    # an Enter it took for a newline is sent again while the text is in its box
    "enterRetries": 2,
    # its SessionStart hook fires while this dialog waits (tests/gemini/test_gemini_facts.py)
    "blockedScreens": ["How would you like to authenticate"],
    "receipts": "gemini",
    "readySeconds": 30,
    "confirmSeconds": 30,
}
