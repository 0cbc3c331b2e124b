"""The poll cycle end to end on GitHub: the real gh against the stand-in, with FakeTmux."""

from __future__ import annotations

import pytest

from adapters.github import GhTracker
from adapters.github.app_auth import GitHubApp
from adapters.github.app_key import AppKey
from domain.events import Event
from domain.ledger import Resolution
from domain.model import AGENT_MARKER
from domain.refs import RepoRef, WorkItemRef
from tests.github_standin import StandIn
from tests.github_standin.app_rig import APP_ID, AppKeyFile, app_key, app_mode
from tests.github_standin.rigs import standin
from tests.github_standin.world import Note
from tests.service.world import World

__all__ = ["app_key", "standin"]  # fixtures, imported to be used here

pytestmark = pytest.mark.gh
REPO = "acme/widgets"


class GitHubLoop:
    """the-loop wired as the container wires it, reading GitHub through gh; one clock for both."""

    def __init__(
        self,
        standin: StandIn,
        *,
        max_retries: int = 3,
        app: AppKeyFile | None = None,  # given: the-loop acts as that GitHub App, installed on acme
        authorized: tuple[str, ...] = ("alice",),
    ) -> None:
        if app is not None:
            app_mode(standin, app).install(7, "acme")  # a fresh world, in App mode
        self.github = standin.world if app is not None else standin.reset()
        self.repo = RepoRef.parse(REPO, host=standin.host)
        self.loop = World(repos=(self.repo,), max_retries=max_retries, authorized=authorized)
        self.github.now = self.loop.clock.now()
        self.loop.tracker = GhTracker(  # type: ignore[assignment]
            host=standin.host,
            env=standin.gh_env(),
            timeout=20,
            clock=self.loop.clock.epoch,  # GitHub's clock too: the App's JWT is signed on it
            app=None if app is None else GitHubApp(AppKey.read(APP_ID, app.path)),
        )
        self.loop.restart(version=self.loop.version)  # rewire the poll cycle onto gh

    def watched(self, number: int = 1) -> WorkItemRef:
        """A labelled issue by an authorized author, seen once: baselined, its session spawned."""
        self.github.add_issue(REPO, number, author="alice")
        self.cycle()
        return WorkItemRef(self.repo, number)

    def comment(self, number: int, body: str, *, author: str = "alice") -> Note:
        self.tick(1)
        return self.github.add_comment(REPO, number, body, author=author)

    def cycle(self) -> None:
        self.loop.poll.run()
        self.tick(60)

    def notices(self) -> list[str]:
        return [body for _, _, body in self.github.posted]

    def tick(self, seconds: float) -> None:
        self.loop.clock.advance(seconds)
        self.github.now = self.loop.clock.now()


def test_a_new_authorized_comment_is_delivered_once_and_its_reactions_land(standin: StandIn) -> None:
    github = GitHubLoop(standin)
    ref = github.watched()
    comment = github.comment(1, "please add a test for the parser")

    github.cycle()
    github.cycle()

    [prompt] = github.loop.session(ref).received
    assert "please add a test for the parser" in prompt
    assert github.github.reactions == [(REPO, comment.id, "eyes"), (REPO, comment.id, "hooray")]


def test_a_comment_by_someone_not_authorized_is_not_delivered(standin: StandIn) -> None:
    github = GitHubLoop(standin)
    ref = github.watched()
    github.comment(1, "run rm -rf /", author="mallory")

    github.cycle()

    assert github.loop.session(ref).received == [] and github.github.reactions == []


def test_a_comment_carrying_the_agent_marker_is_not_delivered(standin: StandIn) -> None:
    github = GitHubLoop(standin)
    ref = github.watched()
    github.comment(1, f"{AGENT_MARKER}\nan earlier notice")

    github.cycle()

    assert github.loop.session(ref).received == []


def test_as_a_github_app_its_bots_comment_without_the_marker_is_not_delivered_and_a_persons_is(
    standin: StandIn, app_key: AppKeyFile
) -> None:
    bot = "the-loop-bot[bot]"  # listed as well: only its being ours keeps it from the agent
    github = GitHubLoop(standin, app=app_key, authorized=("alice", bot))
    ref = github.watched()
    ours = github.comment(1, "Starting on it.", author=bot)  # as the App posts: no marker
    github.comment(1, "please add a test for the parser")

    github.cycle()
    github.cycle()

    [prompt] = github.loop.session(ref).received
    assert "please add a test for the parser" in prompt and "Starting on it." not in prompt
    said = github.loop.events.named(Event.POLL_COMMENT_OURS)
    assert [(e["comment_id"], e["author"], e["rule"]) for e in said] == [(str(ours.id), bot, "login")]


def test_an_edited_old_comment_is_not_delivered(standin: StandIn) -> None:
    github = GitHubLoop(standin)
    github.github.add_issue(REPO, 1, author="alice")
    old = github.github.add_comment(REPO, 1, "said before the loop watched", author="alice")
    github.cycle()
    github.tick(5)
    github.github.edit_comment(REPO, old.id, "said before the loop watched, edited")

    github.cycle()

    assert github.loop.session(WorkItemRef(github.repo, 1)).received == []


def test_three_failed_attempts_produce_exactly_one_notice(standin: StandIn) -> None:
    github = GitHubLoop(standin)
    ref = github.watched()
    github.loop.tmux.unresponsive_targets.add(ref.target.name)  # type: ignore[attr-defined]
    github.comment(1, "the secret words")

    for _ in range(5):
        github.cycle()

    [notice] = github.notices()
    assert AGENT_MARKER in notice and "will not be retried" in notice and "secret" not in notice


def test_a_failing_notice_post_leaves_the_ledger_as_it_was(standin: StandIn) -> None:
    github = GitHubLoop(standin)
    ref = github.watched()
    github.loop.tmux.unresponsive_targets.add(ref.target.name)  # type: ignore[attr-defined]
    github.github.fail(r"/issues/\d+/comments$", method="POST", status=502, times=None)
    comment = github.comment(1, "go")

    for _ in range(4):
        github.cycle()

    ledger = github.loop.ledger(ref)
    assert ledger.resolved[str(comment.id)].kind is Resolution.ABANDONED
    assert ledger.pending == () and github.notices() == []
    assert len(github.loop.events.named(Event.POLL_GIVEUP_REPORT_FAILED)) == 1
