"""Stream defects once suspected in the GitHub polling, each reproduced on the stand-in with the real gh.

A listing read over several pages by page number skips an entry whenever an entry on a page
already read leaves the listing (deleted, closed) or moves to its end (updated): everything after
it shifts one place left, across the page boundary. The review stream's "read" mark must not run
ahead of the cursor the poll cycle keeps.
"""

from __future__ import annotations

import pytest

from tests.github_standin import StandIn
from tests.github_standin.poller import REPO, Poller
from tests.github_standin.rigs import LABEL, standin

__all__ = ["standin"]  # a fixture, imported to be used here

pytestmark = pytest.mark.gh


def test_a_comment_deleted_while_a_burst_is_read_page_by_page_skips_no_other_comment(standin: StandIn) -> None:
    poller = Poller(standin).warm()
    posted = []
    for n in range(150):  # a burst over two and a half minutes, read an hour later: no overlap left
        posted.append(poller.world.add_comment(REPO, 1 + n % 3, f"c{n}").id)
        poller.world.tick()
    poller.world.tick(3600)
    poller.world.after(r"/issues/comments$", lambda: poller.world.delete_comment(REPO, posted[4]))
    returned = [c.id for c in poller.cycle().comments] + [c.id for c in poller.cycle().comments]
    assert returned == [str(i) for i in posted]  # the fifth was read before it was deleted


def test_an_item_updated_while_the_issue_stream_is_read_page_by_page_hides_no_other_change(
    standin: StandIn,
) -> None:
    poller = Poller(standin, items=150).warm()
    for number in range(1, 151):  # a change on every item, a second apart; item 101 loses the label
        poller.world.set_labels(REPO, number, ("other",) if number == 101 else (LABEL, "bug"))
        poller.world.tick()
    poller.world.tick(3600)
    poller.world.after(r"/issues$", lambda: poller.world.add_comment(REPO, 1, "moves item 1 to the end"))
    poller.cycle()
    poller.cycle()
    assert 101 not in [i.ref.number for i in poller.tracker.work_items(poller.repo, LABEL)]


def test_an_item_closed_while_the_first_listing_is_read_skips_no_other_item(standin: StandIn) -> None:
    poller = Poller(standin, items=0)
    for number in range(1, 151):
        poller.world.add_issue(REPO, number)
        poller.world.tick()
    poller.world.tick(3600)
    poller.world.after(r"/issues$", lambda: poller.world.close(REPO, 60))
    listed = {i.ref.number for i in poller.tracker.work_items(poller.repo, LABEL)}
    assert set(range(1, 151)) - {60} <= listed


def test_review_comments_are_read_again_while_the_cursor_is_not_saved(standin: StandIn) -> None:
    """The item worked after a review read keeps failing, so the cycle keeps its old cursor: the
    review comment must come back each time, also once its pull request's update has settled."""
    poller = Poller(standin, pulls=1).warm()
    note = poller.world.add_comment(REPO, 4, "nit", review=True, path="a.py", line=3)
    pinned = poller.cursor
    returned = []
    for pause in (1, 60, 1):
        poller.world.tick(pause)
        poller.tracker.work_items(poller.repo, LABEL)
        returned.append([c.id for c in poller.tracker.new_comments(poller.repo, pinned).comments])
    assert returned == [[str(note.id)]] * 3
