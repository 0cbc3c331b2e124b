"""A single host's slots (`cluster.maxSessions`, SQLite's cluster of one): items beyond the bound
wait, said, shown and told once, their comments kept; a slot freed by a close goes to the item
waiting longest, whichever repository it is in; an item whose agent runs keeps its slot, through a
restart too."""

from __future__ import annotations

from adapters.sqlite.cluster import SingleHost
from app.usecases.cluster.slot_wait import waits
from app.usecases.views.attention import attention
from app.usecases.views.why import comment_story
from domain.events import Event
from domain.fleet import ItemState
from domain.model import ItemState as UpstreamState
from domain.refs import RepoRef, WorkItemRef
from tests.service.world import REPO, World

OTHER = RepoRef.parse("acme/gadgets")


def with_slots(most: int, **world: object) -> World:
    return World(cluster=SingleHost(host="solo", max_sessions=most), **world)  # type: ignore[arg-type]


def running(world: World) -> list[str]:
    return sorted(name for name, session in world.tmux.sessions.items() if not session.all_dead)


def waiting(world: World) -> list[str]:
    return [wait.item for wait in waits(world.store.meta())]


def given(world: World, ref: WorkItemRef, text: str) -> int:
    """How many times `text` reached the item's agent, on its argv or pasted."""
    session = world.tmux.sessions.get(ref.target.name)
    panes = session.panes if session is not None else []
    return sum(text in said for pane in panes for said in [pane.prompt, *pane.received])


def test_with_two_slots_two_labelled_items_start_and_the_third_waits_said_shown_and_told_once() -> None:
    world = with_slots(2)
    first, second, third = (world.item(n) for n in (1, 2, 3))

    for _ in range(3):
        world.cycle()

    said = [e["work_item"] for e in world.events.named(Event.CLUSTER_SLOT_WAITING)]
    told = [body for item, body in world.tracker.posted if item == third]
    assert running(world) == sorted([first.target.name, second.target.name])
    assert said == [str(third)] and waiting(world) == [str(third)]
    assert len(told) == 1 and "waiting for a free slot" in told[0]
    assert attention(world.store)[str(third)].state is ItemState.WAITING_SLOT
    row = next(row for row in world.usecases.fleet.rows() if row.item == third)
    assert row.state is ItemState.WAITING_SLOT


def test_a_waiting_item_gets_the_slot_a_close_frees_and_its_kept_comment_is_delivered_once() -> None:
    world = with_slots(2)
    first, _, third = (world.item(n) for n in (1, 2, 3))
    world.cycle()
    world.comment(third, "kept while it waits")
    world.cycle()
    kept = [c.body for c in world.store.inbox(third)]

    world.admin().close(first, keep_tmux=False)
    world.cycle()
    world.cycle()

    assert kept == ["kept while it waits"] and given(world, third, "kept while it waits") == 1
    assert third.target.name in running(world) and first.target.name not in running(world)
    assert waiting(world) == []
    assert [e["work_item"] for e in world.events.named(Event.CLUSTER_SLOT_WAITING)] == [str(third)]


def test_why_says_a_comment_to_a_waiting_item_waits_for_a_free_slot() -> None:
    world = with_slots(1)
    world.item(1)
    second = world.item(2)
    world.cycle()
    comment = world.comment(second, "why am I waiting")
    world.cycle()

    story = comment_story(world.store, comment.id, item=None, records=world.events.records)

    assert story is not None and story.item == second
    assert story.verdict.startswith("waiting: waiting for a free slot") and "no attempt yet" in story.verdict
    assert story.as_json()["held"]["by"] == "slot"


def test_an_item_closed_upstream_frees_its_slot_for_the_waiting_one() -> None:
    world = with_slots(1)
    first, second = world.item(1), world.item(2)
    world.cycle()
    before = running(world), waiting(world)
    world.tracker.set_state(first, UpstreamState.CLOSED)

    world.cycle()
    world.cycle()

    assert before == ([first.target.name], [str(second)])
    assert running(world) == [second.target.name] and waiting(world) == []


def test_a_freed_slot_goes_to_the_waiting_item_with_the_oldest_undelivered_comment() -> None:
    world = with_slots(1)
    first, second, third = (world.item(n) for n in (1, 2, 3))
    world.cycle()
    world.comment(third, "older, on the third")
    world.comment(second, "newer, on the second")
    world.cycle()

    world.admin().close(first, keep_tmux=False)
    world.cycle()

    assert running(world) == [third.target.name] and waiting(world) == [str(second)]


def test_a_slot_goes_to_the_item_waiting_longest_whichever_repository_is_read_first() -> None:
    world = with_slots(1, repos=(REPO, OTHER))
    first = world.item(1)
    world.cycle()
    longest = world.item(7, repo=OTHER)  # the second repository read: it waits first
    world.cycle()
    later = world.item(2)  # in the repository read first
    world.cycle()

    world.admin().close(first, keep_tmux=False)
    world.cycle()

    assert running(world) == [longest.target.name] and waiting(world) == [str(later)]


def test_an_item_whose_agent_runs_keeps_its_slot_and_an_idle_closed_one_gives_it_up() -> None:
    world = with_slots(1)
    first, second = world.item(1), world.item(2)
    world.cycle()
    for _ in range(3):
        world.comment(second, "still waiting")
        world.cycle()
    held_while_running = running(world)

    world.admin().close(first, keep_tmux=False)
    world.cycle()

    assert held_while_running == [first.target.name]
    assert running(world) == [second.target.name]


def test_a_restarted_daemon_gives_the_running_agents_their_slots_back_before_any_waiting_item() -> None:
    world = with_slots(1)
    first, second = world.item(1), world.item(2)
    world.cycle()
    world.comment(second, "waits through the restart")
    world.cycle()

    world.ports = type(world.ports)(**{**_fields(world.ports), "cluster": SingleHost(host="solo", max_sessions=1)})
    world.restart(version=world.version)  # a new process: its cluster of one holds no lease yet
    world.cycle()
    world.cycle()

    assert running(world) == [first.target.name] and world.spawns() == 1
    assert waiting(world) == [str(second)] and given(world, second, "waits through the restart") == 0


def _fields(ports: object) -> dict[str, object]:
    return {name: getattr(ports, name) for name in ports.__slots__}  # type: ignore[attr-defined]
