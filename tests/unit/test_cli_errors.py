"""How the CLI says a failure: one line on stderr, and an exit status that means something."""

from __future__ import annotations

import pytest

from app.cli.context import NotWired, UsageProblem
from app.cli.main import _fail
from app.config.loader import ConfigError


@pytest.mark.parametrize(
    ("error", "status", "line"),
    [
        (ConfigError("c.yaml: polling: unknown key"), 2, "the-loop: c.yaml: polling: unknown key"),
        (UsageProblem("events: bad\nargument"), 2, "the-loop: events: bad argument"),
        (NotWired("`poll` is not wired yet"), 1, "the-loop: `poll` is not wired yet"),
        (
            PermissionError(13, "Permission denied", ".the-loop/state.db"),
            1,
            "the-loop: .the-loop/state.db: Permission denied",
        ),
        (ZeroDivisionError("division by zero"), 1, "the-loop: unexpected ZeroDivisionError: division by zero"),
    ],
)
def test_every_failure_is_one_line_with_its_status(
    error: Exception, status: int, line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _fail(error) == status
    assert capsys.readouterr().err.splitlines() == [line]
