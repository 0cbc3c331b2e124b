"""GhTracker's listing state kept between processes: `poll --once` from cron costs what the daemon
costs, and a state file that is missing, corrupt, foreign or unwritable only costs a listing."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import pytest

from adapters.github.listing import Listing
from adapters.github.listing_file import ListingFiles
from domain.refs import RepoRef
from tests.github_standin import StandIn
from tests.github_standin.poller import REPO, Poller
from tests.github_standin.rigs import LABEL, standin

__all__ = ["standin"]  # a fixture, imported to be used here

pytestmark = pytest.mark.gh


def numbers(poller: Poller) -> list[int]:
    return [i.ref.number for i in poller.tracker.work_items(poller.repo, LABEL)]


def test_poll_once_from_cron_costs_two_requests_per_idle_repository_both_304(standin: StandIn, tmp_path: Path) -> None:
    poller = Poller(standin, items=1000, pulls=10, state_dir=tmp_path).warm()
    runs = []
    for _ in range(3):
        poller.restart()
        runs.append(poller.cost())
    assert runs == [(2, 2)] * 3


def test_without_a_state_folder_each_new_process_lists_every_labelled_item_again(standin: StandIn) -> None:
    """The cost the state folder saves: the listing's pages, and one review-stream read."""
    poller = Poller(standin, items=1000).warm()
    poller.restart()
    assert poller.cost()[0] == math.ceil(1000 / 100) + 2  # the listing, then both comment streams


def test_a_change_one_process_read_is_known_to_the_next_without_reading_it_again(
    standin: StandIn, tmp_path: Path
) -> None:
    poller = Poller(standin, items=3, state_dir=tmp_path).warm()
    poller.world.set_labels(REPO, 2, ("other",))
    poller.cycle()
    poller.restart()
    poller.world.reset_counters()
    assert (numbers(poller), poller.world.requests, poller.world.not_modified) == ([1, 3], 1, 1)


def test_a_review_comment_listed_late_after_the_process_that_saw_its_update_exited_is_returned(
    standin: StandIn, tmp_path: Path
) -> None:
    poller = Poller(standin, pulls=1, state_dir=tmp_path).warm()
    poller.world.add_comment(REPO, 4, "first", review=True, path="a.py", line=1)
    late = poller.world.add_comment(REPO, 4, "listed late", review=True, path="a.py", line=2, listed=False)
    poller.cycle()  # sees the pull request's update and "first"; its cursor is saved
    poller.world.tick(30)
    poller.world.list_late(REPO)
    poller.restart()
    assert [c.id for c in poller.cycle().comments] == [str(late.id)]


def test_a_review_comment_whose_cycle_did_not_save_its_cursor_comes_back_in_the_next_process(
    standin: StandIn, tmp_path: Path
) -> None:
    poller = Poller(standin, pulls=1, state_dir=tmp_path).warm()
    note = poller.world.add_comment(REPO, 4, "nit", review=True, path="a.py", line=1)
    pinned = poller.cursor
    poller.cycle()  # returns it, but an item fails: the cycle keeps its old cursor
    poller.world.tick(120)  # long past the pull request's settling margin
    poller.restart()
    poller.cursor = pinned
    assert [c.id for c in poller.cycle().comments] == [str(note.id)]


@pytest.mark.parametrize("content", [b"{not json", b'{"v": 99}', b"\xff\xfe", b'{"v": 1, "repo": 3}'])
def test_a_corrupt_state_file_is_ignored_with_a_warning_and_the_listing_redone(
    standin: StandIn, tmp_path: Path, caplog: pytest.LogCaptureFixture, content: bytes
) -> None:
    poller = Poller(standin, items=150, state_dir=tmp_path).warm()
    path = ListingFiles(tmp_path).path(poller.repo)
    assert path is not None and path.exists()
    path.write_bytes(content)
    poller.restart()
    with caplog.at_level(logging.WARNING):
        assert numbers(poller) == list(range(1, 151))
    assert str(poller.repo) in caplog.text and "listing again" in caplog.text


def test_another_repositorys_state_file_is_not_taken_for_this_ones(
    standin: StandIn, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    poller = Poller(standin, items=2, state_dir=tmp_path).warm()
    files = ListingFiles(tmp_path)
    other = RepoRef.parse("acme/other", host=poller.repo.host)
    poller.world.add_repo(other.full_name)
    poller.world.add_issue(other.full_name, 9)
    ours, theirs = files.path(poller.repo), files.path(other)
    assert ours is not None and theirs is not None
    theirs.write_bytes(ours.read_bytes())  # a copy of acme/widgets's state, under acme/other's name
    poller.restart()
    with caplog.at_level(logging.WARNING):
        listed = [i.ref.number for i in poller.tracker.work_items(other, LABEL)]
    assert listed == [9] and "ignored" in caplog.text


def test_a_state_folder_that_cannot_be_written_costs_a_warning_not_a_cycle(
    standin: StandIn, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    poller = Poller(standin, items=2, state_dir=blocked / "github")
    with caplog.at_level(logging.WARNING):
        assert numbers(poller) == [1, 2]
    assert "not written" in caplog.text


def test_writes_replace_the_file_whole_and_leave_no_temporary_file(standin: StandIn, tmp_path: Path) -> None:
    poller = Poller(standin, items=3, state_dir=tmp_path).warm()
    for number in (1, 2):
        poller.world.set_labels(REPO, number, (LABEL, "bug"))
        poller.cycle()
    path = ListingFiles(tmp_path).path(poller.repo)
    assert path is not None
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
    assert path.stat().st_mode & 0o077 == 0  # item bodies of private repositories: the owner's only


def test_the_listings_of_repositories_no_longer_watched_go(tmp_path: Path) -> None:
    files = ListingFiles(tmp_path)
    watched, dropped = RepoRef.parse("acme/widgets"), RepoRef.parse("acme/gone")
    for repo in (watched, dropped):
        files.save(repo, Listing())
    (tmp_path / "notes.txt").write_text("not a listing: left alone")

    gone = files.forget_except([watched])

    assert gone == [files.path(dropped)]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([files.path(watched).name, "notes.txt"])  # type: ignore[union-attr]
