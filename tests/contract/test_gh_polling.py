"""GhTracker's polling cost and stream behaviour, measured on the stand-in with the real gh."""

from __future__ import annotations

import pytest

from adapters.github import GhTracker
from domain.model import Reaction
from domain.refs import WorkItemRef
from tests.github_standin import StandIn
from tests.github_standin.poller import REPO, Poller
from tests.github_standin.rigs import LABEL, standin

__all__ = ["standin"]  # a fixture, imported to be used here

pytestmark = pytest.mark.gh


def test_an_idle_cycle_over_1000_labelled_items_costs_two_requests_both_304(standin: StandIn) -> None:
    poller = Poller(standin, items=1000).warm()
    assert poller.cost() == (2, 2)


def test_a_cycle_with_one_new_comment_costs_two_requests(standin: StandIn) -> None:
    poller = Poller(standin).warm()
    poller.world.add_comment(REPO, 2, "go")
    assert poller.cost() == (2, 0)


def test_the_cycle_after_a_new_comment_is_idle_again(standin: StandIn) -> None:
    poller = Poller(standin).warm()
    poller.world.add_comment(REPO, 2, "go")
    poller.cycle()
    assert poller.cost() == (2, 2)


def test_a_review_comment_costs_one_more_request_in_its_own_cycle(standin: StandIn) -> None:
    poller = Poller(standin, pulls=1).warm()
    poller.world.add_comment(REPO, 4, "nit", review=True, path="a.py", line=3)
    assert poller.cost() == (3, 1)  # the issue-comment stream has nothing new: 304


def test_the_first_listing_follows_link_to_every_page(standin: StandIn) -> None:
    poller = Poller(standin, items=250)
    poller.tracker.work_items(poller.repo, LABEL)
    pages = [path.rsplit("&page=", 1)[-1] for _, path, _ in poller.world.log]
    assert len(pages) == 3 and pages[1:] == ["2", "3"]


def test_comments_filling_more_than_a_page_are_each_returned_once(standin: StandIn) -> None:
    poller = Poller(standin).warm()
    posted = [poller.world.add_comment(REPO, 1 + n % 3, f"c{n}").id for n in range(150)]
    poller.world.tick()
    returned = [c.id for c in poller.cycle().comments] + [c.id for c in poller.cycle().comments]
    assert returned == [str(i) for i in posted]


def test_a_window_kept_on_a_burst_while_it_settles_returns_each_comment_once(standin: StandIn) -> None:
    poller = Poller(standin).warm()
    posted = [poller.world.add_comment(REPO, 1 + n % 3, f"c{n}").id for n in range(150)]
    poller.world.tick()
    returned = []
    for _ in range(3):  # the burst, read again while it settles, then the window past it
        returned += [c.id for c in poller.cycle().comments]
        poller.world.tick(60)
    assert returned == [str(i) for i in posted]


def test_a_stream_that_filled_a_page_moves_on_and_is_idle_again(standin: StandIn) -> None:
    poller = Poller(standin).warm()
    for n in range(150):
        poller.world.add_comment(REPO, 1, f"c{n}")
    poller.world.tick()
    poller.cycle()  # reads the burst; the window moves on but keeps the last minute in view
    poller.world.tick(60)
    poller.cycle()  # the burst has settled: the window moves past it
    poller.cycle()  # the moved window's first, unconditional read
    assert poller.cost() == (2, 2)


def test_a_bulk_relabel_filling_pages_in_one_second_is_idle_again_after_it(standin: StandIn) -> None:
    poller = Poller(standin, items=150).warm()
    for number in range(1, 151):
        poller.world.set_labels(REPO, number, (LABEL, "bug"))
    poller.world.tick()
    poller.cycle()  # reads the burst; the window moves on but keeps the last minute in view
    poller.world.tick(60)
    poller.cycle()  # the burst has settled: the window moves past it
    poller.cycle()  # the moved window's first, unconditional read
    assert poller.cost() == (2, 2)


def test_an_edit_behind_a_stream_that_moved_on_is_not_new(standin: StandIn) -> None:
    poller = Poller(standin).warm()
    first = poller.world.add_comment(REPO, 1, "first")
    for n in range(150):
        poller.world.add_comment(REPO, 1, f"c{n}")
    poller.world.tick()
    poller.cycle()
    poller.world.edit_comment(REPO, first.id, "first, edited")
    assert poller.cycle().comments == ()


def test_a_comment_landing_in_the_second_a_long_stream_was_read_is_not_missed(
    standin: StandIn,
) -> None:
    poller = Poller(standin).warm()
    for n in range(150):
        poller.world.add_comment(REPO, 1, f"c{n}")
    batch = poller.tracker.new_comments(poller.repo, poller.cursor)
    late = poller.world.add_comment(REPO, 2, "same second, page two")
    after = poller.tracker.new_comments(poller.repo, batch.cursor)
    assert [c.id for c in after.comments] == [str(late.id)]


# --- eventual consistency: an entry can show up in a listing after later ones did -------


def test_a_comment_listed_late_after_its_stream_moved_on_is_still_returned(standin: StandIn) -> None:
    poller = Poller(standin).warm()
    for n in range(150):
        poller.world.add_comment(REPO, 1, f"c{n}")
    late = poller.world.add_comment(REPO, 2, "same second, listed late", listed=False)
    poller.world.tick()
    poller.cycle()  # reads the burst (a full page) and moves the window on
    poller.world.list_late(REPO)
    assert [c.id for c in poller.cycle().comments] == [str(late.id)]


def test_a_label_removal_listed_late_after_the_issue_stream_moved_on_is_still_seen(
    standin: StandIn,
) -> None:
    poller = Poller(standin, items=151).warm()
    for number in range(1, 151):
        poller.world.set_labels(REPO, number, (LABEL, "bug"))
    poller.world.set_labels(REPO, 151, ("other",), listed=False)
    poller.world.tick()
    poller.cycle()  # reads the relabel burst (full pages) and moves the window on
    poller.world.list_late(REPO)
    assert 151 not in [i.ref.number for i in poller.tracker.work_items(poller.repo, LABEL)]


def test_a_label_listed_late_just_before_the_first_listing_joins_the_next_one(standin: StandIn) -> None:
    poller = Poller(standin, items=2)
    poller.world.set_labels(REPO, 2, ("other",))
    poller.world.tick(3600)
    poller.world.set_labels(REPO, 2, (LABEL,), listed=False)
    poller.world.tick()
    poller.cycle()  # the first listing does not show item 2 yet
    poller.world.list_late(REPO)
    assert [i.ref.number for i in poller.tracker.work_items(poller.repo, LABEL)] == [1, 2]


# --- review comments: read while a pull request's update settles ----------------------


def test_a_review_comment_in_the_second_of_a_pull_request_update_already_read_is_returned(
    standin: StandIn,
) -> None:
    poller = Poller(standin, pulls=1).warm()
    poller.world.add_comment(REPO, 4, "first", review=True, path="a.py", line=1)
    poller.tracker.work_items(poller.repo, LABEL)
    first = poller.tracker.new_comments(poller.repo, poller.cursor)  # reads the update and "first"
    second = poller.world.add_comment(REPO, 4, "same second", review=True, path="a.py", line=2)
    poller.cursor = first.cursor
    poller.world.tick()
    assert [c.id for c in poller.cycle().comments] == [str(second.id)]


def test_a_review_comment_listed_late_after_its_pull_request_update_is_returned(
    standin: StandIn,
) -> None:
    poller = Poller(standin, pulls=1).warm()
    poller.world.add_comment(REPO, 4, "first", review=True, path="a.py", line=1)
    late = poller.world.add_comment(REPO, 4, "listed late", review=True, path="a.py", line=2, listed=False)
    poller.cycle()  # the pull request's update and "first"
    poller.world.tick(30)
    poller.world.list_late(REPO)
    assert [c.id for c in poller.cycle().comments] == [str(late.id)]


def test_once_a_pull_request_update_settled_an_idle_cycle_costs_two_requests_again(
    standin: StandIn,
) -> None:
    poller = Poller(standin, pulls=1).warm()
    poller.world.add_comment(REPO, 4, "nit", review=True, path="a.py", line=3)
    poller.cycle()
    poller.world.tick(60)
    poller.cycle()  # one more review read, now past the update's settling margin
    assert poller.cost() == (2, 2)


def test_the_poll_interval_github_asks_for_is_kept(standin: StandIn) -> None:
    poller = Poller(standin)
    poller.world.poll_interval = 90
    poller.cycle()
    assert poller.tracker.min_interval_seconds(poller.repo) == 90


def test_a_posted_comment_travels_on_stdin_byte_for_byte(standin: StandIn) -> None:
    poller = Poller(standin)
    body = "<!-- m -->\n\"quoted\" 'single' $(rm -rf /) `x` --input - -X DELETE ✓\n" * 1500
    poller.tracker.post_comment(WorkItemRef(poller.repo, 1), body)
    assert poller.world.posted == [(REPO, 1, body)]


def test_reactions_follow_the_configuration_and_one_left_out_is_not_posted(standin: StandIn) -> None:
    poller = Poller(standin).warm()
    poller.tracker = GhTracker(
        host=standin.host, env=standin.gh_env(), timeout=20, reactions={Reaction.STARTED: "rocket"}
    )
    note = poller.world.add_comment(REPO, 1, "go")
    [comment] = poller.cycle().comments
    poller.tracker.react(comment, Reaction.STARTED)
    poller.tracker.react(comment, Reaction.SUCCEEDED)
    assert poller.world.reactions == [(REPO, note.id, "rocket")]


def test_gh_prints_esc_and_bel_in_a_comment_as_caret_text(standin: StandIn) -> None:
    """gh 2.23 rewrites ESC as `^[` and BEL as `^G` in what it prints. A note, not a defence:
    the sandbox and webhook paths have no gh in front, so the prompt sanitizer stays the proof."""
    poller = Poller(standin).warm()
    poller.world.add_comment(REPO, 1, "a\x1b[201~b\x07c")
    [comment] = poller.cycle().comments
    assert comment.body == "a^[[201~b^Gc"
