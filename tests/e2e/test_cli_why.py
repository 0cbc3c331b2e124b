"""End to end: every comment that does not become a prompt says why, once, and
`the-loop why` tells one comment's whole story."""

from __future__ import annotations

from typing import Any

from domain.refs import WorkItemRef
from tests.e2e.loop_rig import Loop, loop
from tests.tmux_support import real_tmux, wait_for

__all__ = ["loop", "real_tmux"]


def _comment(loop: Loop, ref: WorkItemRef, body: str, author: str = "demo") -> str:
    sandbox = loop.sandbox()
    comment = sandbox.add_comment(ref, body, author=author)
    sandbox.close()
    return comment.id


def _once(loop: Loop) -> None:
    result = loop.cli("poll", "--once")
    assert result.returncode == 0, result.stderr


def _about(loop: Loop, comment_id: str) -> list[dict[str, Any]]:
    return [e for e in loop.events() if e.get("comment_id") == comment_id]


def test_an_unauthorized_comment_gets_one_event_naming_the_rule_and_its_author(loop: Loop) -> None:
    (ref,) = loop.with_sessions(1)
    comment_id = _comment(loop, ref, "please deploy to production", author="mallory")

    _once(loop)
    _once(loop)

    said = [(e["event"], e.get("author"), e.get("rule")) for e in _about(loop, comment_id)]
    assert said == [("poll.comment_unauthorized", "mallory", "routing.authorizedUsers")]


def test_why_tells_the_story_of_an_unauthorized_comment(loop: Loop) -> None:
    (ref,) = loop.with_sessions(1)
    comment_id = _comment(loop, ref, "please deploy to production", author="mallory")
    _once(loop)

    by_id = loop.cli("why", comment_id)
    by_url = loop.cli("why", f"https://github.com/{ref.repo.full_name}/issues/{ref.number}#issuecomment-{comment_id}")

    assert by_id.returncode == 0, by_id.stderr
    assert (by_url.returncode, by_url.stdout) == (0, by_id.stdout)
    assert f"comment {comment_id} on {ref}" in by_id.stdout
    assert "not a prompt: its author mallory is not in routing.authorizedUsers" in by_id.stdout
    assert "poll.comment_unauthorized" in by_id.stdout
    assert "please deploy" not in by_id.stdout  # the comment's text is never shown


def test_why_tells_the_story_of_a_delivered_comment(loop: Loop) -> None:
    (ref,) = loop.with_sessions(1)
    comment_id = _comment(loop, ref, "add a test")
    _once(loop)
    wait_for(lambda: "dispatch.succeeded" in [e["event"] for e in _about(loop, comment_id)], what="its delivery")

    shown = loop.cli("why", comment_id)

    assert shown.returncode == 0, shown.stderr
    assert "delivered: the harness confirmed it" in shown.stdout
    for step in ("dispatch.queued", "dispatch.pasted", "dispatch.succeeded", "reaction.added"):
        assert step in shown.stdout


def test_why_of_an_unknown_comment_says_so_and_exits_1(loop: Loop) -> None:
    loop.with_sessions(1)

    shown = loop.cli("why", "424242")

    assert shown.returncode == 1
    assert "424242" in shown.stderr and "not in the ledger" in shown.stderr


def test_a_comment_held_by_pause_gets_one_event_and_the_item_lists_as_paused(loop: Loop) -> None:
    (ref,) = loop.with_sessions(1)
    pause_id = _comment(loop, ref, "the-loop pause")
    _once(loop)
    comment_id = _comment(loop, ref, "work on the parser")

    _once(loop)
    _once(loop)

    said = [(e["event"], e.get("author"), e.get("rule")) for e in _about(loop, comment_id)]
    assert said == [("comment.held", "demo", "the-loop pause")]
    paused = loop.cli("sessions", "list", "--status", "paused")
    assert paused.returncode == 0, paused.stderr
    assert str(ref) in paused.stdout and "paused (control)" in paused.stdout
    assert f"paused by comment {pause_id} (`the-loop pause`)" in loop.cli("why", comment_id).stdout


def test_a_comment_held_by_stop_gets_one_event_naming_the_rule_and_its_author(loop: Loop) -> None:
    (ref,) = loop.with_sessions(1)
    _comment(loop, ref, "the-loop stop")
    _once(loop)
    comment_id = _comment(loop, ref, "one more thing")

    _once(loop)
    _once(loop)

    said = [(e["event"], e.get("reason"), e.get("author"), e.get("rule")) for e in _about(loop, comment_id)]
    assert said == [("dispatch.dropped", "session-stopped", "demo", "the-loop stop")]
    stopped = loop.cli("sessions", "list")
    assert "stopped (control)" in stopped.stdout, stopped.stdout


def test_reactions_carry_their_work_item_so_events_finds_them(loop: Loop) -> None:
    (ref,) = loop.with_sessions(1)
    comment_id = _comment(loop, ref, "add a test")
    _once(loop)
    wait_for(lambda: "reaction.added" in [e["event"] for e in _about(loop, comment_id)], what="a reaction")

    found = loop.json_lines("events", "--work-item", f"#{ref.number}", "--type", "reaction.*", "--json")

    assert comment_id in [e.get("comment_id") for e in found]
