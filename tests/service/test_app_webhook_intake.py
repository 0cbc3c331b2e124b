"""The GitHub App's webhook in the intake: a delivery is kept only through the installation that
serves its watched repository, the rest is dropped and counted; an installation's events change
which repositories it serves and drop the tokens that are no good any more."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from app.usecases.cycle.webhook import WebhookIntake
from app.usecases.wiring import UseCases
from domain.events import Event
from domain.installations import (
    DROPS_TOKENS,
    InstallationAction,
    InstallationChange,
    Installations,
    installation_changed,
)
from domain.model import Comment
from domain.ports import InstallationsPort
from domain.refs import RepoRef, WorkItemRef
from domain.webhook import Pushed
from tests.service.world import REPO, World

Action = InstallationAction


@dataclass
class FakeInstallations(InstallationsPort):
    """What the App's token code holds, in memory: which installation serves what, and its tokens."""

    held: Installations = field(default_factory=Installations)
    tokens: set[int] = field(default_factory=set)

    def known(self) -> Installations:
        return self.held

    def changed(self, change: InstallationChange) -> bool:
        self.held = installation_changed(self.held, change)
        if change.action not in DROPS_TOKENS or change.installation not in self.tokens:
            return False
        self.tokens.discard(change.installation)
        return True


def _intake(world: World, installations: FakeInstallations) -> WebhookIntake:
    return UseCases(replace(world.ports, installations=installations), world.configs()).webhook_intake


def _push(intake: WebhookIntake, comment: Comment, installation: int) -> None:
    intake.accept(Pushed(comment, frozenset({"loop"}), installation=installation))


def _dropped(world: World) -> list[tuple[str, int]]:
    return [(e["reason"], e["count"]) for e in world.events.named(Event.WEBHOOK_DROPPED)]


def test_a_delivery_through_the_installation_serving_its_repository_is_kept() -> None:
    world = World()
    ref = world.watched()
    intake = _intake(world, FakeInstallations(Installations().with_repos([REPO], 7)))

    _push(intake, world.comment(ref), 7)

    assert [e.item for e in world.store.inbox_index()] == [ref]
    assert Event.WEBHOOK_RECEIVED in world.events.names()


def test_a_delivery_through_another_installation_is_dropped_and_counted() -> None:
    world = World()
    ref = world.watched()
    intake = _intake(world, FakeInstallations(Installations().with_repos([REPO], 7)))

    _push(intake, world.comment(ref), 9)

    assert (world.store.inbox_index(), _dropped(world)) == ([], [("installation-unwatched", 1)])


def test_a_delivery_for_a_repository_not_watched_is_dropped_whatever_its_installation() -> None:
    world = World()
    world.watched()
    intake = _intake(world, FakeInstallations(Installations().with_repos([REPO], 7)))
    elsewhere = WorkItemRef(RepoRef.parse("acme/other"), 1)

    _push(intake, Comment("77", elsewhere, "alice", "go", world.clock.now()), 7)

    assert _dropped(world) == [("unwatched", 1)]


def test_a_repository_removed_from_its_installation_drops_its_deliveries_until_it_is_added_back() -> None:
    world = World()
    ref = world.watched()
    installations = FakeInstallations(Installations().with_repos([REPO], 7))
    intake = _intake(world, installations)

    intake.installation_changed(InstallationChange(7, Action.REMOVED, removed=frozenset({REPO})))
    _push(intake, world.comment(ref, "while removed"), 7)
    intake.installation_changed(InstallationChange(7, Action.ADDED, added=frozenset({REPO})))
    _push(intake, world.comment(ref, "added back"), 7)

    assert _dropped(world) == [("repository-removed", 1)]
    assert len(world.store.inbox_index()) == 1


def test_an_installation_event_is_said_with_what_it_changed_and_whether_a_token_was_dropped() -> None:
    world = World()
    intake = _intake(world, FakeInstallations(Installations().with_repos([REPO], 7), tokens={7}))

    intake.installation_changed(InstallationChange(7, Action.DELETED))
    intake.installation_changed(InstallationChange(8, Action.CREATED, added=frozenset({REPO})))

    said = [
        (e["installation"], e["action"], e["added"], e["token_dropped"])
        for e in world.events.named(Event.WEBHOOK_INSTALLATION_CHANGED)
    ]
    assert said == [(7, "deleted", [], True), (8, "created", [str(REPO)], False)]
