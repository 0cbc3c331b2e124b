"""The demo harness in a real tmux pane: the-loop's delivery shows up framed and submitted."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from domain.model import SpawnRequest
from domain.refs import TmuxTarget
from tests.tmux_support import RealTmux, real_tmux, wait_for

__all__ = ["real_tmux"]
pytestmark = pytest.mark.tmux

ROOT = Path(__file__).resolve().parents[2]
DEMO = TmuxTarget("loop-demo")


def test_a_delivered_comment_shows_framed_in_the_demo_harness(real_tmux: RealTmux) -> None:
    tmux = real_tmux.adapter()
    argv = (sys.executable, "-m", "app.demo.harness", "--session-id", "c-1")
    request = SpawnRequest(
        target=DEMO, argv=argv, cwd=str(ROOT), prompt="first prompt text", mark="d" * 32, remain_on_exit=True
    )
    pane = tmux.spawn(request)
    screen = lambda: real_tmux.run("capture-pane", "-p", "-t", f"{DEMO.exact}:")  # noqa: E731
    wait_for(lambda: "listening" in screen(), what="demo harness listening")
    tmux.deliver(DEMO, "hello from a comment\nsecond line", delivery_id="d-1", pane=pane, mark="d" * 32)
    shown = wait_for(lambda: "submitted" in screen() and screen(), what="submitted")
    assert "│ hello from a comment\n│ second line\n└─\n↵ submitted (message 1)" in shown
