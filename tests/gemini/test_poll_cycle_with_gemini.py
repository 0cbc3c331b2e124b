"""Issue 21 (Gemini CLI) through the-loop's own poll cycle with the real Gemini CLI on real tmux,
offline: spawn in a never-seen git worktree -> ready -> prompt confirmed by receipt; a comment
confirmed; one while Gemini is busy; the session killed -> the next comment resumes the same
conversation (`--resume ID`); a Gemini that exits at once."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from adapters.receipts.files import FileReceipts
from app.config.settings import Settings
from domain.ledger import Resolution
from domain.model import HarnessSpec, Reaction
from domain.refs import WorkItemRef
from tests.claude.loop import TimedEvents, WallClock
from tests.codex.test_poll_cycle_with_codex import events_of, worktree
from tests.gemini.rig import GeminiRig, gemini_api, gemini_binary, gemini_rig
from tests.gemini_standin.server import Busy, GeminiStandIn, Say
from tests.service.world import World
from tests.tmux_support import wait_for

__all__ = ["gemini_api", "gemini_binary", "gemini_rig"]

pytestmark = pytest.mark.gemini


def gemini_spec(binary: Path, **keys: Any) -> HarnessSpec:
    """The built-in `gemini` harness as the-loop's settings make it, the pinned binary (and `keys`) laid over it."""
    entry = {"binary": str(binary), **keys}
    return Settings.model_validate({"routing": {"harnesses": {"gemini": entry}}}).harness_spec("gemini")


def world_for(rig: GeminiRig, base: Path, spec: HarnessSpec | None = None) -> World:
    spec = spec or gemini_spec(rig.binary)
    return World(
        tmux=rig.tmux.adapter(),  # type: ignore[arg-type]
        harness=spec.name,
        harnesses={spec.name: spec},
        clock=WallClock(),
        events=TimedEvents(),
        workdir=str(base / "work" / "{slug}"),
        receipts=FileReceipts(base / "receipts", gemini_home=rig.codex_dir),
        session_ids=lambda: str(uuid.uuid4()),
    )


def said(api: GeminiStandIn, text: str) -> bool:
    return any(text in " ".join(t.user_texts()) for t in api.turns())


@pytest.fixture(scope="module")
def agent(
    gemini_rig: GeminiRig, gemini_api: GeminiStandIn, tmp_path_factory: pytest.TempPathFactory
) -> tuple[World, WorkItemRef, Path]:
    gemini_api.reset()
    base = tmp_path_factory.mktemp("loop")
    world = world_for(gemini_rig, base)
    ref = world.item(1)
    folder = worktree(base, ref.slug)
    world.cycle()
    return world, ref, folder


def test_issue21_a_spawn_in_a_never_seen_git_worktree_is_ready_and_its_prompt_confirmed_by_receipt(
    agent: tuple[World, WorkItemRef, Path], gemini_api: GeminiStandIn
) -> None:
    world, ref, _ = agent
    assert [e["source"] for e in world.events.named("session.ready")] == ["startup"]
    succeeded = world.events.named("dispatch.succeeded")
    assert [(e["delivery_id"].split("-")[0], e["confirmed_by"]) for e in succeeded] == [("start", "receipt")]
    (ready,) = [r for r in world.receipts.read(ref, world.record(ref).spawn_id) if r.source == "startup"]
    assert ready.conversation == world.record(ref).harness_session_id  # the id the-loop chose
    wait_for(lambda: said(gemini_api, "You are the agent for"), what="the start prompt reaching the model")


def test_issue21_a_comment_to_a_ready_gemini_is_confirmed_by_its_receipt(
    agent: tuple[World, WorkItemRef, Path], gemini_api: GeminiStandIn
) -> None:
    world, ref, _ = agent
    comment = world.comment(ref, "please add a test")
    world.cycle()
    assert events_of(world, "dispatch.succeeded", comment.id)[0]["confirmed_by"] == "receipt"
    wait_for(lambda: said(gemini_api, "please add a test"), what="the turn")


def test_issue21_a_comment_while_gemini_is_busy_is_confirmed_once_gemini_takes_it(
    agent: tuple[World, WorkItemRef, Path], gemini_api: GeminiStandIn
) -> None:
    world, ref, _ = agent
    gemini_api.reset()
    gemini_api.script(Busy(60, then=Say("first done")))
    first = world.comment(ref, "keep the model busy")
    world.cycle()
    wait_for(lambda: said(gemini_api, "keep the model busy"), timeout=30, what="the model request held")
    second = world.comment(ref, "arrives while busy")
    # Gemini queues a message typed while it works and submits it after the turn: its receipt follows
    threading.Timer(5, gemini_api.release).start()

    world.cycle()

    assert events_of(world, "dispatch.succeeded", first.id)[0]["confirmed_by"] == "receipt"
    assert events_of(world, "dispatch.succeeded", second.id)[0]["confirmed_by"] == "receipt"
    wait_for(lambda: said(gemini_api, "arrives while busy"), timeout=30, what="the queued comment reaching the model")


def test_issue21_a_killed_gemini_is_resumed_by_the_next_comment_in_the_same_conversation(
    gemini_rig: GeminiRig, agent: tuple[World, WorkItemRef, Path], gemini_api: GeminiStandIn
) -> None:
    world, ref, _ = agent
    conversation = world.record(ref).harness_session_id
    gemini_rig.tmux.run("kill-session", "-t", ref.target.exact)
    gemini_api.reset()
    comment = world.comment(ref, "carry on after the kill")

    world.cycle()

    assert events_of(world, "dispatch.succeeded", comment.id)[0]["confirmed_by"] == "receipt"
    assert world.events.named("session.respawned")[0]["resumed"] is True
    assert world.record(ref).harness_session_id == conversation
    ready = [r for r in world.receipts.read(ref, world.record(ref).spawn_id) if r.source == "resume"]
    assert [r.conversation for r in ready] == [conversation]
    wait_for(gemini_api.turns, what="the resumed turn")
    assert said(gemini_api, "please add a test")  # the conversation so far came along


def test_issue21_a_gemini_that_exits_at_once_fails_every_attempt_posts_one_notice_and_never_celebrates(
    gemini_rig: GeminiRig, tmp_path: Path
) -> None:
    world = world_for(gemini_rig, tmp_path, gemini_spec(gemini_rig.binary, args=["--no-such-flag"]))
    ref = world.item(30, author="bob")  # not authorized: only the comment spawns
    world.cycle()
    comment = world.comment(ref, "never reaches an agent")

    for _ in range(world.max_retries + 1):  # the last cycle finds nothing left to try
        world.cycle()

    failed = events_of(world, "dispatch.failed", comment.id)
    assert [e["will_retry"] for e in failed] == [True, True, False]
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.ABANDONED
    assert len(world.tracker.posted) == 1 and "was **not delivered**" in world.tracker.posted[0][1]
    reactions = [r for c, r in world.tracker.reactions if c == comment.id]
    assert Reaction.FAILED in reactions and Reaction.SUCCEEDED not in reactions
    assert world.events.named("dispatch.succeeded") == []
