"""The real gh acting as a GitHub App against the stand-in: what it posts is signed by the App's bot,
and a read marks the bot's comments as the-loop's own by that login, marker or not."""

from __future__ import annotations

import pytest

from domain.model import CommentKind, Reaction
from domain.refs import RepoRef, WorkItemRef
from tests.github_standin import StandIn
from tests.github_standin.app_rig import AppKeyFile, app_key, app_mode, app_tracker
from tests.github_standin.rigs import standin

__all__ = ["app_key", "standin"]  # fixtures, imported to be used here

pytestmark = pytest.mark.gh
REPO = "acme/widgets"
BOT = "the-loop-bot[bot]"  # the stand-in App's slug, as GitHub signs its installation's writes


def test_a_notice_and_a_reaction_posted_as_the_app_are_its_bots_and_a_read_marks_the_notice_ours(
    standin: StandIn, app_key: AppKeyFile
) -> None:
    app = app_mode(standin, app_key)
    app.install(7, "acme")
    world = standin.world
    world.add_issue(REPO, 1)
    gh = app_tracker(standin, app_key)
    repo = RepoRef.parse(REPO, host=standin.host)
    item = WorkItemRef(repo, 1)
    cursor = gh.new_comments(repo, None).cursor
    world.tick()
    asked = world.add_comment(REPO, 1, "please look", author="alice")
    world.tick()

    notice = gh.post_comment(item, "Starting on it.")  # no marker: the login alone says it is ours
    [read_asked] = [c for c in gh.new_comments(repo, cursor).comments if c.id == str(asked.id)]
    gh.react(read_asked, Reaction.STARTED)
    world.tick()
    read = gh.new_comments(repo, cursor).comments

    assert [(c.author, c.by_us, c.is_ours) for c in read] == [("alice", False, False), (BOT, True, True)]
    assert [(c.id, c.author, c.by_us) for c in gh.arming(gh.work_items(repo, "loop")[0], "loop").comments] == [
        (str(asked.id), "alice", False),
        (notice, BOT, True),
    ]
    again = gh.comment(item, notice, CommentKind.ISSUE_COMMENT)
    assert again is not None and (again.author, again.by_us) == (BOT, True)
    assert world.reactors == [(REPO, asked.id, "eyes", BOT, "Bot")]
    # GET /app, once for the process: the bot's login is asked once and kept
    assert [p for _, p, _ in world.log].count("/app") == 1


def test_comments_by_another_apps_bot_or_by_a_person_are_not_ours(standin: StandIn, app_key: AppKeyFile) -> None:
    app = app_mode(standin, app_key)
    app.install(7, "acme")
    world = standin.world
    world.add_issue(REPO, 1)
    gh = app_tracker(standin, app_key)
    repo = RepoRef.parse(REPO, host=standin.host)
    cursor = gh.new_comments(repo, None).cursor
    world.tick()
    world.add_comment(REPO, 1, "bumped the lock file", author="dependabot[bot]")
    world.add_comment(REPO, 1, "the-loop-bot, please look", author="The-Loop-Bot")
    world.add_comment(REPO, 1, "typed by hand", author="THE-LOOP-BOT[BOT]")  # GitHub's logins ignore case
    world.tick()

    read = gh.new_comments(repo, cursor).comments

    assert [c.by_us for c in read] == [False, False, True]
