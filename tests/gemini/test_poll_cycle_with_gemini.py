"""Gemini CLI through the-loop's own poll cycle with the real Gemini CLI on real tmux,
offline: spawn in a never-seen git worktree -> ready -> prompt confirmed by receipt; a comment
confirmed, and what its turn cost said at its end; one while Gemini is busy; the session killed ->
the next comment resumes the same conversation (`--resume ID`); a Gemini that exits at once."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from adapters.harnesses.gemini.hooks import receipt_channel
from adapters.receipts.files import FileReceipts
from domain.events import Event
from domain.model import HarnessSpec
from domain.refs import WorkItemRef
from tests.claude import loop
from tests.gemini.rig import GeminiRig, gemini_api, gemini_binary, gemini_rig
from tests.gemini_standin.server import GeminiStandIn, Say
from tests.gemini_standin.server import Usage as Served
from tests.real_agents import first_spawn
from tests.service.world import World
from tests.tmux_support import wait_for

__all__ = ["gemini_api", "gemini_binary", "gemini_rig"]

pytestmark = pytest.mark.gemini


def world_for(rig: GeminiRig, base: Path, spec: HarnessSpec | None = None) -> World:
    spec = spec or loop.builtin_spec("gemini", rig.binary)
    channels = {"gemini": partial(receipt_channel, home=rig.gemini_dir)}
    return loop.real_world(rig.tmux.adapter(), spec, base, receipts=FileReceipts(base / "receipts", channels=channels))


@pytest.fixture(scope="module")
def agent(
    gemini_rig: GeminiRig, gemini_api: GeminiStandIn, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[World, WorkItemRef, Path]]:
    world, ref, folder = first_spawn(lambda base: world_for(gemini_rig, base), tmp_path_factory, gemini_api)
    yield world, ref, folder
    # Gemini may outlive its tmux server: its group, as the-loop recorded it, is ended while the pane runs
    world.tmux.end_group(world.record(ref).harness_group, grace_seconds=5)


def test_a_spawn_in_a_never_seen_git_worktree_is_ready_and_its_prompt_confirmed_by_receipt(
    agent: tuple[World, WorkItemRef, Path], gemini_api: GeminiStandIn
) -> None:
    world, ref, _ = agent
    assert [e["source"] for e in world.events.named(Event.SESSION_READY)] == ["startup"]
    succeeded = world.events.named(Event.DISPATCH_SUCCEEDED)
    assert [(e["delivery_id"].split("-")[0], e["confirmed_by"]) for e in succeeded] == [("start", "receipt")]
    (ready,) = [r for r in world.receipts.read(ref, world.record(ref).spawn_id) if r.source == "startup"]
    assert ready.conversation == world.record(ref).harness_session_id  # the id the-loop chose
    wait_for(lambda: loop.said(gemini_api, "You are the agent for"), what="the start prompt reaching the model")


def test_a_comment_to_a_ready_gemini_is_confirmed_by_its_receipt(
    agent: tuple[World, WorkItemRef, Path], gemini_api: GeminiStandIn
) -> None:
    world, ref, _ = agent
    loop.a_comment_confirmed(world, ref, gemini_api, "please add a test")


def test_a_comments_turn_end_says_what_it_cost_as_geminis_record_says_it(
    agent: tuple[World, WorkItemRef, Path], gemini_api: GeminiStandIn
) -> None:
    world, ref, _ = agent
    wait_for(lambda: loop.idle(world, ref), timeout=120, what="Gemini idle after its earlier turns")
    gemini_api.reset(fallback=Say("test added", usage=Served(input=40, output=9, cached=30, reasoning=2)))
    comment = world.comment(ref, "please add another test")
    world.cycle()
    wait_for(lambda: loop.idle(world, ref), timeout=60, what="the comment's turn")

    world.cycle()

    (finished,) = [e for e in world.events.named(Event.SESSION_TURN_FINISHED) if e.get("comment_id") == comment.id]
    cost = {k: finished.get(k) for k in ("tokens_in", "tokens_out", "cache_write", "cache_read", "model")}
    model = gemini_api.turns()[0].model
    assert cost == {"tokens_in": 10, "tokens_out": 9, "cache_write": 0, "cache_read": 30, "model": model}, finished


def test_a_comment_while_gemini_is_busy_is_confirmed_once_gemini_takes_it(
    agent: tuple[World, WorkItemRef, Path], gemini_api: GeminiStandIn
) -> None:
    world, ref, _ = agent
    # Gemini queues a message typed while it works and submits it after the turn: its receipt follows
    loop.a_comment_while_busy(world, ref, gemini_api, release_after=5)


def test_a_killed_gemini_is_resumed_by_the_next_comment_in_the_same_conversation(
    gemini_rig: GeminiRig, agent: tuple[World, WorkItemRef, Path], gemini_api: GeminiStandIn
) -> None:
    world, ref, _ = agent
    conversation = world.record(ref).harness_session_id
    # its conversation is saved once its turns ended: this test may be the first its worker runs on
    # the module's agent (the suite's workers split a module), minutes before the others would have
    # let it end its start's turn — a resume of a conversation never saved starts a fresh one
    wait_for(lambda: loop.idle(world, ref), timeout=120, what="Gemini idle after its start's turn")
    gemini_rig.tmux.run("kill-session", "-t", ref.target.exact)
    gemini_api.reset()
    loop.resumed_after_a_kill(world, ref, conversation, gemini_api, earlier="Fix the widget.")


def test_a_gemini_that_exits_at_once_fails_every_attempt_posts_one_notice_and_never_celebrates(
    gemini_rig: GeminiRig, tmp_path: Path
) -> None:
    loop.exits_at_once(
        world_for(gemini_rig, tmp_path, loop.builtin_spec("gemini", gemini_rig.binary, args=["--no-such-flag"])), 30
    )
