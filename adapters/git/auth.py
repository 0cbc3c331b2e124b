"""How every git call that may reach a remote runs: gh answers for credentials, nobody is asked."""

from __future__ import annotations

import shlex

# never wait for a person: no password prompt, no ssh host-key question; messages in English
QUIET_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_SSH_COMMAND": "ssh -o BatchMode=yes", "LC_ALL": "C"}


def credential_args(gh: str) -> tuple[str, ...]:
    """`git` options making the operator's gh its only credential helper: no token is written
    anywhere (the empty value first drops any helper configured elsewhere)."""
    return ("-c", "credential.helper=", "-c", f"credential.helper=!{shlex.quote(gh)} auth git-credential")
