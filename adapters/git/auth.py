"""How every git call that may reach a remote runs: gh answers for credentials, nobody is asked."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping

from domain.refs import RepoRef

# never wait for a person: no password prompt, no ssh host-key question; messages in English
QUIET_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_SSH_COMMAND": "ssh -o BatchMode=yes", "LC_ALL": "C"}

# The whole environment git reaching a repository runs in, in place of the daemon's: the one gh's
# calls about it get as a GitHub App (its installation's token, handed to git by `gh auth
# git-credential`). None: the daemon's own, where gh answers with its own login. Raises
# `TrackerError` when no token can be had.
RemoteEnv = Callable[[RepoRef], Mapping[str, str] | None]


def credential_args(gh: str) -> tuple[str, ...]:
    """`git` options making gh its only credential helper: no token is written anywhere (the empty
    value first drops any helper configured elsewhere). gh answers with a token of its environment
    if it holds one, else with its stored login."""
    return ("-c", "credential.helper=", "-c", f"credential.helper=!{shlex.quote(gh)} auth git-credential")
