"""Who may steer, from GitHub's own permissions (`routing.authorize`), through the poll cycle: a
collaborator's role on the item's repository authorizes them, a permission is read once and kept a
while, a webhook saying access changed drops it, and a permission that cannot be read is never a guess."""

from __future__ import annotations

import json

from domain.authorize import AccessChange, Permission
from domain.events import Event
from domain.ledger import Resolution
from domain.model import ItemKind, Reaction
from domain.receipts import ReceiptKind
from domain.refs import RepoRef, WorkItemRef
from domain.webhook import Pushed
from tests.fakes.receipts import FakeReceipts
from tests.service.world import REPO, World

FORK = RepoRef.parse("olivia/widgets")


def _world(**settings: object) -> World:
    """alice is listed (her items start their agents); carol writes to the repository, olivia reads it."""
    world = World(**{"permission": Permission.WRITE, **settings})  # type: ignore[arg-type]
    world.tracker.grant(REPO, "carol", Permission.WRITE)
    world.tracker.grant(REPO, "olivia", Permission.READ)
    return world


def _received(world: World, ref: WorkItemRef) -> str:
    return "".join(world.session(ref).received)


def _refused(world: World) -> list[tuple[str, str, str]]:
    said = world.events.named(Event.POLL_COMMENT_UNAUTHORIZED) + world.events.named(Event.CONTROL_IGNORED)
    return [(e["author"], e["rule"], e["standing"]) for e in said]


def test_a_collaborator_with_write_prompts_and_a_read_only_outsider_does_not_and_is_said_once() -> None:
    world = _world()
    ref = world.watched()
    wanted = world.comment(ref, "add the widget test", author="carol")
    stranger = world.comment(ref, "delete the repository", author="olivia")

    world.cycle()
    world.cycle()

    assert "add the widget test" in _received(world, ref)
    assert "delete the repository" not in _received(world, ref)
    assert world.ledger(ref).resolved[wanted.id].kind is Resolution.DELIVERED
    assert world.ledger(ref).resolved[stranger.id].kind is Resolution.SKIPPED
    assert _refused(world) == [("olivia", "routing.authorize.permission", "below")]


def test_a_maintainer_s_control_verb_steers_and_a_read_only_outsider_s_is_ignored() -> None:
    world = _world(permission=Permission.MAINTAIN)
    world.tracker.grant(REPO, "dana", Permission.MAINTAIN)
    ref = world.watched()
    ignored = world.comment(ref, "the-loop stop", author="carol")  # write is less than maintain
    paused = world.comment(ref, "the-loop pause", author="dana")

    world.cycle()

    ledger = world.ledger(ref)
    assert (ledger.paused, ledger.stopped) == (True, False)
    assert ledger.resolved[paused.id].kind is Resolution.CONTROL
    assert ledger.resolved[ignored.id].kind is Resolution.SKIPPED
    assert _refused(world) == [("carol", "routing.authorize.permission", "below")]


def test_deny_wins_over_an_admin_s_permission() -> None:
    world = _world(deny=("carol",))
    world.tracker.grant(REPO, "carol", Permission.ADMIN)
    ref = world.watched()
    world.comment(ref, "do it anyway", author="carol")

    world.cycle()

    assert "do it anyway" not in _received(world, ref)
    assert _refused(world) == [("carol", "routing.authorize.deny", "denied")]
    assert world.tracker.permissions_asked == []  # deny decides without asking


def test_a_listed_user_steers_without_any_permission_being_read() -> None:
    world = _world()
    ref = world.watched()
    world.comment(ref, "listed, not a collaborator", author="alice")

    world.cycle()

    assert "listed, not a collaborator" in _received(world, ref)
    assert world.tracker.permissions_asked == []


def test_the_permission_read_is_kept_one_lookup_per_author_until_it_is_older_than_cache_seconds() -> None:
    world = _world(authorize_cache_seconds=600)
    ref = world.watched()
    for n in range(3):  # three cycles, a minute apart
        world.comment(ref, f"step {n}", author="carol")
        world.comment(ref, f"aside {n}", author="olivia")
        world.cycle()
    kept = list(world.tracker.permissions_asked)
    world.clock.advance(600)
    world.comment(ref, "after the cache lapsed", author="carol")

    world.cycle()

    assert sorted(kept) == [(REPO, "carol"), (REPO, "olivia")]
    assert world.tracker.permissions_asked[len(kept) :] == [(REPO, "carol")]
    assert all(f"step {n}" in _received(world, ref) for n in range(3))
    assert "after the cache lapsed" in _received(world, ref)


def test_a_removed_member_stops_steering_once_a_member_webhook_drops_what_was_kept() -> None:
    world = _world()
    ref = world.watched()
    world.comment(ref, "while a member", author="carol")
    world.cycle()
    world.tracker.grant(REPO, "carol", Permission.NONE)  # removed as a collaborator on GitHub

    world.usecases.webhook_intake.access_changed(AccessChange("member", REPO))
    world.comment(ref, "after removal", author="carol")
    world.cycle()

    assert "while a member" in _received(world, ref)
    assert "after removal" not in _received(world, ref)
    assert _refused(world) == [("carol", "routing.authorize.permission", "below")]
    assert [e["permissions"] for e in world.events.named(Event.AUTHORIZE_FORGOTTEN)] == [1]


def test_a_permission_that_cannot_be_read_is_not_authorized_said_once_and_asked_again_for_the_next_comment() -> None:
    world = _world()
    ref = world.watched()
    world.tracker.fail_permissions = True
    lost = world.comment(ref, "during the outage", author="carol")
    world.cycle()
    world.tracker.fail_permissions = False
    world.cycle()

    world.comment(ref, "after the outage", author="carol")
    world.cycle()

    assert "during the outage" not in _received(world, ref)
    assert world.ledger(ref).resolved[lost.id].kind is Resolution.SKIPPED
    assert [(e["login"], e["work_item"]) for e in world.events.named(Event.AUTHORIZE_LOOKUP_FAILED)] == [
        ("carol", str(ref))
    ]
    assert _refused(world) == [("carol", "routing.authorize.permission", "unknown")]
    assert "after the outage" in _received(world, ref)


def test_a_comment_edited_before_its_first_read_counts_its_editor_s_permission_too() -> None:
    world = _world()
    ref = world.watched()
    by_collaborator = world.comment(ref, "first draft", author="alice")
    world.tracker.edit_comment(by_collaborator.id, "edited by a collaborator", editor="carol")
    by_outsider = world.comment(ref, "second draft", author="alice")
    world.tracker.edit_comment(by_outsider.id, "edited by an outsider", editor="olivia")

    world.cycle()

    assert "edited by a collaborator" in _received(world, ref)
    assert "edited by an outsider" not in _received(world, ref)
    assert [e["editor"] for e in world.events.named(Event.POLL_COMMENT_EDITED_BY_OTHER)] == ["olivia"]


def test_an_item_opened_by_a_collaborator_not_listed_starts_its_agent_at_its_first_look() -> None:
    world = _world()
    ref = world.item(author="carol")

    world.cycle()

    assert world.record(ref).harness == "claude"
    assert world.spawns() == 1


def test_a_fork_s_author_counts_by_their_permission_on_the_base_repository_not_on_their_fork() -> None:
    world = _world()
    world.tracker.grant(FORK, "olivia", Permission.ADMIN)
    ref = WorkItemRef(REPO, 2)
    world.tracker.add_item(ref, author="alice", kind=ItemKind.PULL_REQUEST, head=FORK.full_name, sha="a" * 40)
    world.cycle()
    world.comment(ref, "merge my fork", author="olivia")

    world.cycle()

    assert "merge my fork" not in _received(world, ref)
    assert _refused(world) == [("olivia", "routing.authorize.permission", "below")]
    assert world.tracker.permissions_asked == [(REPO, "olivia")]


def test_a_collaborator_s_allow_answers_the_agent_s_permission_request_and_an_outsider_s_does_not() -> None:
    world = _world()
    ref = world.watched()
    spawn = world.record(ref).spawn_id
    receipts = world.receipts
    assert isinstance(receipts, FakeReceipts)
    receipts.plant(spawn, ReceiptKind.TOOL)
    receipts.plant(spawn, ReceiptKind.BLOCKED, tool="Bash", tool_input=json.dumps({"command": "make"}))
    world.clock.advance(3)
    key = [r for r in receipts.read(ref, spawn) if r.kind is ReceiptKind.BLOCKED][-1].key
    world.cycle()
    world.comment(ref, "the-loop deny", author="olivia")
    answer = world.comment(ref, "the-loop allow", author="carol")

    world.cycle()

    assert json.loads(receipts.given[key])["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
    assert (answer.id, Reaction.CONTROL) in world.tracker.reactions
    assert _refused(world) == [("olivia", "routing.authorize.permission", "below")]


def test_a_webhook_keeps_an_author_not_read_yet_and_drops_one_known_to_be_below() -> None:
    world = _world()
    ref = world.watched()
    world.comment(ref, "first, by polling", author="olivia")
    world.cycle()  # olivia's read permission is kept now
    intake = world.usecases.webhook_intake

    for author in ("olivia", "carol"):
        intake.accept(_pushed(world, ref, author))

    assert [entry.comment_id for entry in world.store.inbox_index()] == [_last(world, ref, "carol")]
    assert [e["reason"] for e in world.events.named(Event.WEBHOOK_DROPPED)] == ["unauthorized"]


def _pushed(world: World, ref: WorkItemRef, author: str) -> Pushed:
    return Pushed(world.comment(ref, f"pushed by {author}", author=author))


def _last(world: World, ref: WorkItemRef, author: str) -> str:
    return [c.id for c in world.tracker.comments_of(ref) if c.author == author][-1]
