"""What the-loop relies on when Claude Code ends, crashes and is resumed: real binary, real tmux, offline.

A module of its own: a crash leaves a mark in Claude's HOME (its next start falls back to the
classic renderer), so these facts get a HOME of their own."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tests.anthropic_standin.server import AnthropicStandIn, Kind
from tests.claude.fixtures import anthropic, claude, claude_binary, claude_config, claude_rig
from tests.claude.rig import ClaudeRig, ClaudeSession
from tests.tmux_support import wait_for

__all__ = ["anthropic", "claude", "claude_binary", "claude_config", "claude_rig"]

pytestmark = pytest.mark.claude


def finished_turn(claude: ClaudeRig, prompt: str) -> ClaudeSession:
    session = claude.spawn(claude.folder(), prompt=prompt)
    claude.hooks.wait("Stop", session.session_id)
    return session


def transcribed(claude: ClaudeRig, session: ClaudeSession) -> list[str]:
    """The entry types of the session's transcript, the file --resume reads."""
    path = Path(claude.hooks.of("SessionStart", session.session_id)[0]["transcript_path"])
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [json.loads(line).get("type", "") for line in lines if line.endswith("}")]


def test_closing_the_tmux_session_fires_session_end(claude: ClaudeRig) -> None:
    session = finished_turn(claude, "hello")
    claude.end(session)
    ended = claude.hooks.wait("SessionEnd", session.session_id, timeout=10)
    assert ended["reason"] == "other"


def test_a_killed_claude_resumed_by_id_fires_session_start_from_resume_and_goes_on(
    claude: ClaudeRig, anthropic: AnthropicStandIn
) -> None:
    first = finished_turn(claude, "remember this first prompt")
    # the transcript is written after the hooks: a crash at Stop can leave nothing to resume
    wait_for(lambda: "assistant" in transcribed(claude, first), what="the reply in the transcript")
    claude.crash(first)
    # the prompt as the resume's last argument, as a respawn gives it: a paste at the instant of
    # SessionStart once sat in the input line through 30 Enters under load (cause not found)
    claude.spawn(first.cwd, "--resume", first.session_id, prompt="after the crash")
    start = claude.hooks.wait("SessionStart", first.session_id, where=lambda h: h["source"] == "resume")
    assert start["cwd"] == str(first.cwd.resolve())
    assert claude.hooks.of("SessionEnd", first.session_id) == []  # SIGKILL: no hook on the way out
    claude.hooks.wait("UserPromptSubmit", first.session_id, since_ns=start.at_ns)
    claude.hooks.wait("Stop", first.session_id, since_ns=start.at_ns)
    texts = anthropic.requests(Kind.TURN)[-1].user_texts()
    assert texts[-2:] == ["remember this first prompt", "after the crash"]  # the same conversation


def test_resuming_an_unknown_id_exits_at_once_without_session_start(
    claude: ClaudeRig, anthropic: AnthropicStandIn
) -> None:
    unknown = str(uuid.uuid4())
    session = claude.spawn(claude.folder(), "--resume", unknown)
    wait_for(lambda: claude.pane_dead(session), timeout=10, what="Claude exited")
    assert claude.exit_status(session) == 1
    assert f"No conversation found with session ID: {unknown}" in claude.tmux.screen(session)
    assert [h.event for h in claude.hooks.all(unknown)] == ["SessionEnd"]
    assert anthropic.requests() == []
