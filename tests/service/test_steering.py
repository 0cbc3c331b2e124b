"""Steering from GitHub — control comments, the status reply, the trigger phrase."""

from __future__ import annotations

from domain.events import Event
from domain.ledger import Resolution
from domain.model import AGENT_MARKER, ClosedBy, Reaction, SessionStatus, SpawnMode
from tests.service.world import World


def _prompts(world: World, ref: object) -> str:
    session = world.session(ref)  # type: ignore[arg-type]
    return "".join([session.prompt, *session.received])


def test_pause_then_five_comments_then_resume_delivers_the_five_in_order() -> None:
    world = World()
    ref = world.watched()
    pause = world.comment(ref, "the-loop pause")
    comments = [world.comment(ref, f"step {n}") for n in range(1, 6)]
    world.cycle()
    waiting = list(world.ledger(ref).pending)
    world.comment(ref, "/The-Loop RESUME")

    world.cycle()

    assert [p.comment.id for p in waiting] == [c.id for c in comments]  # they waited, all five
    received = world.session(ref).received
    assert [n for n in range(1, 6) if f"step {n}" in "".join(received)] == [1, 2, 3, 4, 5]
    assert [next(i for i, text in enumerate(received) if f"step {n}" in text) for n in range(1, 6)] == [0, 1, 2, 3, 4]
    assert world.ledger(ref).resolved[pause.id].kind is Resolution.CONTROL
    assert "the-loop pause" not in _prompts(world, ref) and "RESUME" not in _prompts(world, ref)


def test_while_paused_comments_wait_without_an_attempt_and_pause_survives_a_restart() -> None:
    world = World()
    ref = world.watched()
    world.comment(ref, "the-loop pause")
    waiting = world.comment(ref, "wait for it")
    world.cycle()
    world.restart(version=world.version)

    world.cycle()

    assert world.ledger(ref).paused and world.ledger(ref).attempts(waiting.id) == 0
    assert world.session(ref).received == []
    assert [q for q in world.events.named(Event.DISPATCH_QUEUED) if q.get("comment_id") == waiting.id] == []


def test_stop_then_a_comment_then_start_spawns_and_the_comment_made_while_stopped_is_not_delivered() -> None:
    world = World()
    ref = world.watched()
    world.comment(ref, "the-loop stop")
    world.cycle()
    stopped = world.record(ref)
    during = world.comment(ref, "said while stopped")
    world.cycle()
    world.comment(ref, "the-loop start")

    world.cycle()

    assert (stopped.status, stopped.closed_by) == (SessionStatus.CLOSED, ClosedBy.CONTROL)
    assert world.ledger(ref).resolved[during.id].reason == "session-stopped"
    assert world.record(ref).status is SessionStatus.ACTIVE and not world.session(ref).pane_dead
    assert world.events.named(Event.SESSION_RESPAWNED)  # started again
    assert "said while stopped" not in _prompts(world, ref)


def test_start_spawns_now_even_when_spawn_on_unmatched_would_not() -> None:
    world = World(spawn_mode=SpawnMode.NEVER)
    ref = world.watched()
    assert ref.target.name not in world.tmux.sessions
    world.comment(ref, "the-loop start")

    world.cycle()

    assert not world.session(ref).pane_dead and world.events.named(Event.SESSION_SPAWNED)


def test_status_answers_with_one_comment_of_the_loops_own_values() -> None:
    world = World()
    ref = world.watched()
    delivered = world.comment(ref, "do the thing")
    world.cycle()
    world.comment(ref, "the-loop status")

    world.cycle()

    (reply,) = [body for item, body in world.tracker.posted if item == ref]
    assert reply.startswith(AGENT_MARKER) and "status of github:acme/widgets#1" in reply
    assert f"comment {delivered.id}: confirmed (receipt)" in reply and "Comments waiting: 0" in reply
    assert "do the thing" not in reply and "the-loop status" not in reply
    assert (world.tracker.reactions[-1][1]) is Reaction.CONTROL


def test_an_unknown_verb_gets_one_short_reply_listing_the_verbs_and_never_its_own_word() -> None:
    world = World()
    ref = world.watched()
    world.comment(ref, "the-loop rm-rf-everything")

    world.cycle()
    world.cycle()

    (reply,) = [body for _, body in world.tracker.posted]
    assert "`the-loop pause`" in reply and "rm-rf-everything" not in reply
    assert world.events.named(Event.CONTROL_UNKNOWN) and world.session(ref).received == []


def test_an_unauthorized_authors_control_comment_is_ignored_event_only() -> None:
    world = World()
    ref = world.watched()
    world.comment(ref, "the-loop stop", author="mallory")

    world.cycle()

    assert world.record(ref).status is SessionStatus.ACTIVE
    assert world.tracker.posted == [] and world.tracker.reactions == []
    assert world.events.named(Event.CONTROL_IGNORED)[0]["comment_id"]


def test_a_replayed_control_comment_does_nothing() -> None:
    world = World()
    ref = world.watched()
    status = world.comment(ref, "the-loop status")
    world.cycle()
    world.store.inbox_add([status])  # a webhook redelivery, or a re-read after a crash
    world.restart(version=world.version)

    world.cycle()

    assert len(world.tracker.posted) == 1 and world.events.names().count(Event.CONTROL_EXECUTED) == 1


def test_with_a_trigger_only_comments_holding_it_reach_the_agent_the_others_are_not_for_it() -> None:
    world = World(trigger="@the-loop")
    ref = world.watched()
    chat = world.comment(ref, "colleagues talking")
    ask = world.comment(ref, "@The-Loop please add a test")

    world.cycle()

    assert world.ledger(ref).resolved[chat.id].reason == "not-for-the-agent"
    assert world.ledger(ref).resolved[ask.id].kind is Resolution.DELIVERED
    assert "colleagues talking" not in _prompts(world, ref)
    assert [r for r in world.tracker.reactions if r[0] == chat.id] == []
    assert world.events.named(Event.POLL_NOT_FOR_AGENT)[0]["comment_id"] == chat.id


def test_start_does_not_undo_an_operators_close() -> None:
    world = World()
    ref = world.watched()
    world.admin().close(ref, keep_tmux=True)
    world.comment(ref, "the-loop start")

    world.cycle()

    assert world.record(ref).closed_by is ClosedBy.OPERATOR and world.events.named(Event.CONTROL_REFUSED)


def test_an_indented_resume_on_a_paused_item_waits_like_any_comment_and_goes_as_a_prompt() -> None:
    world = World()
    ref = world.watched()
    world.comment(ref, "the-loop pause")
    world.cycle()
    code = world.comment(ref, "    the-loop resume")  # Markdown shows it as code: text, not a command
    world.cycle()
    still_paused, waiting = world.ledger(ref).paused, [p.comment.id for p in world.ledger(ref).pending]
    world.comment(ref, "the-loop resume")

    world.cycle()

    assert still_paused and waiting == [code.id] and world.events.names().count(Event.CONTROL_EXECUTED) == 2
    assert world.ledger(ref).resolved[code.id].kind is Resolution.DELIVERED
    assert "the-loop resume" in "".join(world.session(ref).received)  # as a prompt, fenced like any


def test_verbs_in_code_or_a_quote_on_an_active_item_are_delivered_as_prompts() -> None:
    world = World()
    ref = world.watched()
    bodies = ("    the-loop stop", "\tthe-loop pause", "```\nthe-loop stop\n```", "> the-loop pause\n\nWhy?")
    comments = [world.comment(ref, body) for body in bodies]

    world.cycle()

    ledger = world.ledger(ref)
    assert not ledger.paused and not ledger.stopped and world.record(ref).status is SessionStatus.ACTIVE
    assert [ledger.resolved[c.id].kind for c in comments] == [Resolution.DELIVERED] * 4
    assert world.events.named(Event.CONTROL_EXECUTED) == []


def test_a_mention_of_the_loop_pauses_and_is_never_delivered_to_the_agent() -> None:
    world = World(trigger="@the-loop")  # comments that mention it are the agent's prompts
    ref = world.watched()
    pause = world.comment(ref, "@the-loop pause")
    waiting = world.comment(ref, "@the-loop please fix the build")
    world.cycle()

    assert world.ledger(ref).paused and world.ledger(ref).resolved[pause.id].kind is Resolution.CONTROL
    assert [p.comment.id for p in world.ledger(ref).pending] == [waiting.id]
    assert "pause" not in _prompts(world, ref)
    assert world.events.named(Event.CONTROL_EXECUTED)[0]["verb"] == "pause"


def test_a_mention_not_written_as_a_command_gets_the_reply_saying_how_and_never_its_own_words() -> None:
    world = World(trigger="@the-loop")
    ref = world.watched()
    world.comment(ref, "@the-loop: stop")

    world.cycle()

    (reply,) = [body for _, body in world.tracker.posted]
    assert "`the-loop stop`" in reply and "`@the-loop pause`" in reply and "@the-loop: stop" not in reply
    assert world.record(ref).status is SessionStatus.ACTIVE and world.session(ref).received == []
    assert world.events.named(Event.CONTROL_UNKNOWN)
