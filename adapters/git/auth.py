"""How every git call that may reach a remote runs: gh answers for credentials, nobody is asked."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Protocol

from domain.refs import RepoRef

# never wait for a person: no password prompt, no ssh host-key question; messages in English
QUIET_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_SSH_COMMAND": "ssh -o BatchMode=yes", "LC_ALL": "C"}

# git's own lines for a 401 to credentials it sent (remote-curl.c, git 2.x; LC_ALL=C keeps them in
# English): `Authentication failed for '<url>'` when the refs' listing refused them, `RPC failed;
# HTTP 401 …` when a later request of the same command did (the token ended between the two). Only
# git's `fatal:`/`error:` lines count: a server's `remote:` text is not git's word
_REFUSED = re.compile(r"^(?:fatal: Authentication failed for '|error: RPC failed; HTTP 401\b)", re.MULTILINE)


class RemoteEnv(Protocol):
    """The whole environment git reaching a repository runs in, in place of the daemon's: the one
    gh's calls about it get as a GitHub App (its installation's token, handed to git by `gh auth
    git-credential`). None: the daemon's own, where gh answers with its own login.

    `refused`: an environment it gave whose token the remote refused (`credentials_refused`); the
    answer holds a token in its place, the one another caller got meanwhile or else a new one.

    Failure modes: `TrackerError` when no token can be had.
    """

    def __call__(self, repo: RepoRef, *, refused: Mapping[str, str] | None = None) -> Mapping[str, str] | None: ...


def credentials_refused(stderr: str) -> bool:
    """Whether git's `stderr` says the remote refused the credentials git sent (HTTP 401): a token
    expired early or revoked, which a new one may mend. Not when git had none to send (`could not
    read Username`: the helper answered nothing, and would again), nor a 403 or a 404 (what the
    token may reach: a new token of the same installation reaches no more), nor any other failure."""
    return _REFUSED.search(stderr) is not None


def credential_args(gh: str) -> tuple[str, ...]:
    """`git` options making gh its only credential helper: no token is written anywhere (the empty
    value first drops any helper configured elsewhere). gh answers with a token of its environment
    if it holds one, else with its stored login."""
    return ("-c", "credential.helper=", "-c", f"credential.helper=!{shlex.quote(gh)} auth git-credential")
