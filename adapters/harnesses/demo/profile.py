"""The demo harness's built-in profile: it writes receipt files into `$THE_LOOP_RECEIPTS` itself."""

PROFILE = {
    "binary": "{python}",
    "args": ["-m", "app.demo.harness"],
    "sessionIdArgs": ["--session-id", "{session_id}"],
    "resumeArgs": ["--resume", "{session_id}"],
    "receipts": "file",
    "readySeconds": 15,
    "confirmSeconds": 5,
}
