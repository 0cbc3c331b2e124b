"""Telling a remote's refusal of git's credentials (HTTP 401) apart from git's other failures, by
what git 2.x prints for each (the first two as the real git prints them in
tests/integration/test_git_app_credentials.py)."""

from __future__ import annotations

import pytest

from adapters.git.auth import credentials_refused

URL = "https://github.com/acme/widgets.git/"


@pytest.mark.parametrize(
    "stderr",
    [
        f"fatal: Authentication failed for '{URL}'\n",  # the refs' listing refused the credentials given
        # the refs listed, a later request of the same fetch refused (the token ended between them)
        "error: RPC failed; HTTP 401 curl 22 The requested URL returned error: 401\n"
        "fatal: expected flush after ref listing\n",
        # GitHub's own words first
        f"remote: Invalid username or password.\nfatal: Authentication failed for '{URL}'\n",
    ],
)
def test_a_401_to_the_credentials_git_was_given_is_a_refusal(stderr: str) -> None:
    assert credentials_refused(stderr)


@pytest.mark.parametrize(
    "stderr",
    [
        # no credentials were given at all: the helper answered nothing, which a new token does not change
        "fatal: could not read Username for 'https://github.com': terminal prompts disabled\n",
        f"remote: Repository not found.\nfatal: repository '{URL}' not found\n",
        # a token without the permission: a new one of the same installation holds no more
        f"remote: Write access to repository not granted.\nfatal: unable to access '{URL}': The requested URL"
        " returned error: 403\n",
        "error: RPC failed; HTTP 403 curl 22 The requested URL returned error: 403\n",
        f"fatal: unable to access '{URL}': Could not resolve host: github.com\n",
        "fatal: couldn't find remote ref refs/pull/7/head\n",
        "error: RPC failed; HTTP 4010 curl 22 made up\n",
        # a server's own text (`remote:` lines) is not git's word: it cannot ask for a new token
        "remote: fatal: Authentication failed for 'x'\nfatal: the remote end hung up unexpectedly\n",
        "",
    ],
)
def test_any_other_failure_is_not_a_refusal(stderr: str) -> None:
    assert not credentials_refused(stderr)
