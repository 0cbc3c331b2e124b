"""`python -m bench.app_tokens` in CI's form: tokens living 5 s, each installation's token replaced three
times at the steady hosts, the daemons acting as the App on SQLite and two on one PostgreSQL. Every
comment is delivered once, no call fails, no host asks a token an expiry did not call for, and no
token's text is in a state file or the database."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from tests.e2e.cli import ROOT, clean_env
from tests.github_standin.rigs import require_gh
from tests.postgres_support import server_binaries
from tests.tmux_support import require_tmux

pytestmark = [pytest.mark.tmux, pytest.mark.gh]
EXPIRIES = 3
TOKEN_SECONDS = 5
MARGIN = 2


def soaked() -> tuple[dict[str, Any], int, str]:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.app_tokens",
            "--expiries",
            str(EXPIRIES),
            # a call's retry with a fresh token must reach the stand-in within the token's life even
            # when gh takes seconds to start on a loaded machine
            "--token-seconds",
            str(TOKEN_SECONDS),
            "--margin",
            str(MARGIN),
            "--json",
        ],
        cwd=ROOT,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert result.stdout, result.stderr[-3000:]
    return json.loads(result.stdout), result.returncode, result.stderr[-3000:]


@pytest.mark.timeout(300)
def test_app_tokens_expiring_every_few_seconds_lose_no_comment_and_fail_no_call_on_three_hosts() -> None:
    require_tmux()
    require_gh()
    server_binaries()  # PostgreSQL missing fails loudly
    figures, status, stderr = soaked()

    assert figures["replaced"] >= EXPIRIES, stderr
    assert figures["failed"] == {"lite": [], "host-a": [], "host-b": []}
    for tokens in figures["tokens"]:
        # one refresh per expiry, per installation, per host: none while a token had more than the margin left
        assert tokens["early"] == 0 and tokens["issued"] <= tokens["expiries"] + 1, tokens
        assert tokens["unanswered"] == 0, tokens  # a 401 is asked again once, with a new token, and taken
    for host in ("lite", "host-a", "host-b"):
        assert sum(t["issued"] for t in figures["tokens"] if t["host"] == host) > 0, host
    for comments in figures["comments"]:
        posted = comments["posted"]
        assert posted > 0 and (comments["lost"], comments["duplicated"]) == (0, 0), comments
        assert comments["forwarded"] == comments["in_ledger"] == comments["confirmed"] == posted, comments
    assert figures["leaks"] == []
    assert (status, figures["sound"]) == (0, True)
