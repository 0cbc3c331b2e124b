"""Issue 21 (Codex) through the-loop's own poll cycle with the real Codex on real tmux, offline:
spawn in a never-seen git worktree -> ready -> prompt confirmed by receipt; a comment confirmed;
the session killed -> the next comment resumes the same conversation (`codex resume ID`)."""

from __future__ import annotations

import os
import signal
import subprocess
import tomllib
import uuid
from pathlib import Path
from typing import Any

import pytest

from adapters.codex.trust import CodexTrust
from adapters.receipts.files import FileReceipts
from app.config.settings import Settings
from domain.ledger import Resolution
from domain.model import HarnessSpec, Reaction
from domain.receipts import ReceiptKind
from domain.refs import WorkItemRef
from tests.claude.loop import TimedEvents, WallClock
from tests.codex.rig import CodexRig, codex_binary, codex_rig, openai
from tests.openai_standin.server import Busy, OpenAIStandIn, Say
from tests.service.world import World
from tests.tmux_support import wait_for

__all__ = ["codex_binary", "codex_rig", "openai"]

pytestmark = pytest.mark.codex

TRUST_QUESTION = "Trust this folder?"


def codex_spec(binary: Path, **keys: Any) -> HarnessSpec:
    """The built-in `codex` harness as the-loop's settings make it, the pinned binary (and `keys`) laid over it."""
    entry = {"binary": str(binary), **keys}
    return Settings.model_validate({"routing": {"harnesses": {"codex": entry}}}).harness_spec("codex")


def world_for(rig: CodexRig, base: Path, spec: HarnessSpec | None = None) -> World:
    spec = spec or codex_spec(rig.binary)
    return World(
        tmux=rig.tmux.adapter(),  # type: ignore[arg-type]
        harness=spec.name,
        harnesses={spec.name: spec},
        clock=WallClock(),
        events=TimedEvents(),
        workdir=str(base / "work" / "{slug}"),
        receipts=FileReceipts(base / "receipts"),
        trust_port=CodexTrust(rig.config),
        session_ids=lambda: str(uuid.uuid4()),
    )


def worktree(base: Path, slug: str) -> Path:
    """A git worktree of a new repository, as the-loop's workspaces are: Codex has seen neither."""
    main = base / "repos" / slug
    subprocess.run(["git", "init", "-q", str(main)], check=True, timeout=30)
    subprocess.run(
        ["git", "-C", str(main), "commit", "-q", "--allow-empty", "-m", "init"],
        check=True,
        timeout=30,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
            "PATH": "/usr/bin:/bin",
        },
    )
    folder = base / "work" / slug
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(folder)], check=True, timeout=30)
    return folder


def events_of(world: World, name: str, comment_id: str) -> list[dict[str, Any]]:
    return [e for e in world.events.named(name) if e.get("comment_id") == comment_id]


@pytest.fixture(scope="module")
def agent(
    codex_rig: CodexRig, openai: OpenAIStandIn, tmp_path_factory: pytest.TempPathFactory
) -> tuple[World, WorkItemRef, Path]:
    openai.reset()
    base = tmp_path_factory.mktemp("loop")
    world = world_for(codex_rig, base)
    ref = world.item(1)
    folder = worktree(base, ref.slug)
    assert str(folder) not in tomllib.loads(codex_rig.config.read_text()).get("projects", {})
    world.cycle()
    return world, ref, folder


def test_issue21_a_spawn_in_a_never_seen_git_worktree_is_trusted_ready_and_its_prompt_confirmed_by_receipt(
    codex_rig: CodexRig, agent: tuple[World, WorkItemRef, Path]
) -> None:
    world, ref, folder = agent
    projects = tomllib.loads(codex_rig.config.read_text())["projects"]
    assert projects[str(folder.resolve())] == {"trust_level": "trusted"}
    assert [e["directory"] for e in world.events.named("session.trusted")] == [str(folder)]
    assert [e["source"] for e in world.events.named("session.ready")] == ["startup"]
    succeeded = world.events.named("dispatch.succeeded")
    assert [(e["delivery_id"].split("-")[0], e["confirmed_by"]) for e in succeeded] == [("start", "receipt")]
    # issue 21 item 2: Codex's own conversation id, from its SessionStart receipt, is recorded
    (ready,) = [r for r in world.receipts.read(ref, world.record(ref).spawn_id) if r.source == "startup"]
    assert world.record(ref).harness_session_id == ready.conversation
    pane = world.record(ref).pane_id
    assert TRUST_QUESTION not in codex_rig.tmux.run("capture-pane", "-p", "-t", pane, check=False)


def test_issue21_a_comment_to_a_ready_codex_is_confirmed_by_its_receipt(
    agent: tuple[World, WorkItemRef, Path], openai: OpenAIStandIn
) -> None:
    world, ref, _ = agent
    comment = world.comment(ref, "please add a test")
    world.cycle()
    assert events_of(world, "dispatch.succeeded", comment.id)[0]["confirmed_by"] == "receipt"
    wait_for(lambda: any("please add a test" in " ".join(t.user_texts()) for t in openai.turns()), what="the turn")


def test_issue21_a_killed_codex_is_resumed_by_the_next_comment_in_the_same_conversation(
    codex_rig: CodexRig, agent: tuple[World, WorkItemRef, Path], openai: OpenAIStandIn
) -> None:
    world, ref, _ = agent
    started = [r for r in world.receipts.read(ref, world.record(ref).spawn_id) if r.source == "startup"]
    conversation = started[0].conversation
    pid = int(codex_rig.tmux.run("display-message", "-p", "-t", world.record(ref).pane_id, "#{pane_pid}").strip())
    codex_rig.tmux.run("kill-session", "-t", ref.target.exact)
    wait_for(
        lambda: not Path(f"/proc/{pid}/cmdline").exists() or b"codex" not in Path(f"/proc/{pid}/cmdline").read_bytes(),
        timeout=20,
        what="Codex gone",
    )
    next_comment_resumes(world, ref, openai, conversation)
    wait_for(openai.turns, what="the resumed turn")
    assert "please add a test" in " ".join(openai.turns()[0].user_texts())  # the conversation so far came along


def next_comment_resumes(world: World, ref: WorkItemRef, openai: OpenAIStandIn, conversation: str) -> None:
    """After its session was killed, the next comment resumes `conversation`, confirmed by receipt."""
    openai.reset()
    comment = world.comment(ref, "carry on after the kill")

    world.cycle()

    assert events_of(world, "dispatch.succeeded", comment.id)[0]["confirmed_by"] == "receipt"
    assert world.events.named("session.respawned")[0]["resumed"] is True
    assert world.record(ref).harness_session_id == conversation
    ready = [r for r in world.receipts.read(ref, world.record(ref).spawn_id) if r.kind is ReceiptKind.READY]
    assert [(r.source, r.conversation) for r in ready] == [("resume", conversation)]


def test_issue21_a_sigkilled_resumed_codex_is_resumed_again_in_the_same_conversation(
    codex_rig: CodexRig, agent: tuple[World, WorkItemRef, Path], openai: OpenAIStandIn
) -> None:
    world, ref, _ = agent
    conversation = world.record(ref).harness_session_id
    pane = world.record(ref).pane_id
    pid = int(codex_rig.tmux.run("display-message", "-p", "-t", pane, "#{pane_pid}").strip())
    os.kill(pid, signal.SIGKILL)
    wait_for(
        lambda: codex_rig.tmux.run("display-message", "-p", "-t", pane, "#{pane_dead}", check=False).strip() == "1",
        what="tmux to see the pane dead",
    )
    comment = world.comment(ref, "carry on after SIGKILL")

    world.cycle()

    assert events_of(world, "dispatch.succeeded", comment.id)[0]["confirmed_by"] == "receipt"
    assert [e["resumed"] for e in world.events.named("session.respawned")][-1] is True
    assert world.record(ref).harness_session_id == conversation


def test_issue21_a_comment_while_codex_is_busy_is_confirmed_and_reaches_the_model(
    agent: tuple[World, WorkItemRef, Path], openai: OpenAIStandIn
) -> None:
    world, ref, _ = agent
    comment_while_busy_is_confirmed_and_reaches_the_model(world, ref, openai)


def comment_while_busy_is_confirmed_and_reaches_the_model(
    world: World, ref: WorkItemRef, openai: OpenAIStandIn
) -> None:
    """A comment while the model holds the turn: both comments confirmed by receipt, the second answered after."""
    openai.reset()
    openai.script(Busy(60, then=Say("first done")))
    first = world.comment(ref, "keep the model busy")
    world.cycle()
    wait_for(
        lambda: any("keep the model busy" in " ".join(t.user_texts()) for t in openai.turns()),
        timeout=60,
        what=f"the model request held; {len(openai.turns())} turns",
    )
    second = world.comment(ref, "arrives while busy")

    world.cycle()

    assert events_of(world, "dispatch.succeeded", first.id)[0]["confirmed_by"] == "receipt"
    assert events_of(world, "dispatch.succeeded", second.id)[0]["confirmed_by"] == "receipt"
    openai.release()
    wait_for(
        lambda: any("arrives while busy" in " ".join(t.user_texts()) for t in openai.turns()),
        timeout=60,
        what="the comment sent while busy reaching the model",
    )


def test_issue21_a_codex_that_exits_at_once_fails_every_attempt_posts_one_notice_and_never_celebrates(
    codex_rig: CodexRig, openai: OpenAIStandIn, tmp_path: Path
) -> None:
    fails_every_attempt_once_noticed(
        world_for(codex_rig, tmp_path, codex_spec(codex_rig.binary, args=["--no-such-flag"]))
    )


def fails_every_attempt_once_noticed(world: World) -> None:
    """A comment to a harness that exits at once: every attempt fails, one notice, never 🎉."""
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
