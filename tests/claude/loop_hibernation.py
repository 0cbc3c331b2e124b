"""Hibernation through the-loop's own poll cycle over a real agent on real tmux, offline: what the
Claude Code and Codex modules prove alike. An agent whose turn ended is ended once idle past
`routing.hibernateAfterSeconds`, its conversation kept; the next comment resumes that conversation;
a client attached to its tmux session keeps it awake. A module's tests share one agent and may run
in any order (workers take tests from each other): each brings the agent to the state it starts from."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from domain.events import Event
from domain.fleet import ItemState
from domain.item_facts import status_of
from domain.model import SessionState
from domain.receipts import conversation_of
from domain.refs import WorkItemRef
from tests.agent_tmux import pane_pid
from tests.claude.loop import idle, said
from tests.processes import gone
from tests.service.world import World
from tests.tmux_support import RealTmux, wait_for

AFTER = 1.0  # routing.hibernateAfterSeconds: short, so a test waits for little beyond the agent's turn
TURN = 60.0  # how long an agent's turn (or its exit) may take on a busy machine


def rested(world: World, ref: WorkItemRef) -> None:
    """Until the item's agent has ended every turn it was given, and a cycle has noted it (the
    daemon's look at the receipts does at once): a comment whose turn is open keeps it awake."""
    wait_for(lambda: idle(world, ref), timeout=TURN, what="the agent's turn ended")
    world.cycle()


def hibernated(world: World, ref: WorkItemRef) -> None:
    """Once its turns are over, the item's agent is hibernated as the daemon's sweep would, on its lane."""
    rested(world, ref)
    wait_for(lambda: world.hibernation.hibernate(ref), timeout=TURN, what="the agent hibernated")


def awake(world: World, ref: WorkItemRef) -> None:
    """The item's agent runs: a hibernated one is woken by a comment."""
    if world.record(ref).hibernated_at is not None:
        world.comment(ref, "wake up")
        world.cycle()
        assert world.record(ref).hibernated_at is None


def pane_gone(tmux: RealTmux, pane: str) -> bool:
    """No such pane any more (a tmux server left with no session exits: none at all)."""
    return pane not in tmux.run("list-panes", "-a", "-F", "#{pane_id}", check=False).split()


def an_idle_agent_is_hibernated_its_conversation_kept(world: World, ref: WorkItemRef, tmux: RealTmux) -> None:
    awake(world, ref)
    record = world.record(ref)
    pid, before = pane_pid(tmux, record.pane_id), len(world.events.named(Event.SESSION_HIBERNATED))
    assert pid and not gone(pid)

    hibernated(world, ref)

    wait_for(lambda: gone(pid), timeout=TURN, what=f"the agent's process {pid} gone")
    wait_for(lambda: pane_gone(tmux, record.pane_id), what="its dead pane removed")
    assert world.tmux.session_state(ref.target) is SessionState.ABSENT  # its session held nothing else
    kept = world.record(ref)
    assert kept.harness_session_id == record.harness_session_id
    assert kept.hibernated_at is not None
    ended = world.events.named(Event.SESSION_HIBERNATED)[before:]
    assert [(e["harness_session_id"], e["ended"]) for e in ended] == [(record.harness_session_id, True)]
    harness = world.watch.state(kept, world.spawner.harness(kept.harness))
    assert status_of(kept, world.ledger(ref), harness=harness).state is ItemState.HIBERNATED


def the_next_comment_resumes_the_hibernated_conversation(
    world: World, ref: WorkItemRef, standin: Any, *, earlier: str
) -> None:
    """Confirmed by its receipt once; the resumed harness says it is ready in the same conversation,
    and the model gets the conversation so far (`earlier` among it). `standin`: the model API's."""
    if world.record(ref).hibernated_at is None:
        hibernated(world, ref)
    # the conversation as the harness named it (Codex names its own; its receipts say which)
    conversation = conversation_of(world.receipts.read(ref, world.record(ref).spawn_id))
    assert conversation == world.record(ref).harness_session_id
    standin.reset()
    before = len(world.events.records)
    comment = world.comment(ref, "carry on after hibernating")

    world.cycle()

    events = world.events.records[before:]
    story = [{k: v for k, v in e.items() if k in {"event", "resumed", "reason", "woke_from"}} for e in events]
    confirmed = [e for e in events if e["event"] == Event.DISPATCH_SUCCEEDED.value and e["comment_id"] == comment.id]
    assert [e["confirmed_by"] for e in confirmed] == ["receipt"], story
    woke = [e for e in events if e["event"] == Event.SESSION_RESPAWNED.value]
    assert [(e["resumed"], e.get("woke_from"), e["harness_session_id"]) for e in woke] == [
        (True, "hibernation", conversation)
    ], story
    record = world.record(ref)
    assert (record.harness_session_id, record.hibernated_at) == (conversation, None)
    ready = [r for r in world.receipts.read(ref, record.spawn_id) if r.source == "resume"]
    assert [r.conversation for r in ready] == [conversation]
    wait_for(lambda: said(standin, "carry on after hibernating"), timeout=TURN, what="the resumed turn")
    assert earlier in " ".join(standin.turns()[0].user_texts())


@contextmanager
def attached(tmux: RealTmux, world: World, ref: WorkItemRef) -> Iterator[None]:
    """A control-mode client (`tmux -C attach`) on the item's session, as tmux counts an operator's
    terminal: attached while its stdin is open, detached once it is killed."""
    client = subprocess.Popen(
        ["tmux", "-L", tmux.socket, "-C", "attach-session", "-t", ref.target.exact],
        env={**os.environ, **tmux.env},
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: world.tmux.clients(ref.target) == 1, what=f"a client attached to {ref.target}")
        yield
    finally:
        client.kill()
        client.wait(timeout=10)
    wait_for(lambda: world.tmux.clients(ref.target) == 0, what=f"the client detached from {ref.target}")


def idle_past_the_setting(world: World, ref: WorkItemRef) -> None:
    """Until the agent's last receipt is older than `routing.hibernateAfterSeconds`."""
    last = max(r.at for r in world.watch.receipts(world.record(ref)) if r.at is not None)
    after = timedelta(seconds=world.hibernate_after_seconds or 0.0)
    wait_for(lambda: world.clock.now() > last + after, what="the agent idle past the setting")


def an_attached_client_keeps_the_agent_awake_until_it_detaches(world: World, ref: WorkItemRef, tmux: RealTmux) -> None:
    awake(world, ref)
    rested(world, ref)
    pid = pane_pid(tmux, world.record(ref).pane_id)

    with attached(tmux, world, ref):
        idle_past_the_setting(world, ref)
        assert world.hibernation.hibernate(ref) is False
        assert not gone(pid) and world.record(ref).hibernated_at is None

    wait_for(lambda: world.hibernation.hibernate(ref), timeout=TURN, what="the agent hibernated once detached")
    wait_for(lambda: gone(pid), timeout=TURN, what=f"the agent's process {pid} gone")
