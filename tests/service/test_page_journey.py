"""A comment's journey on the fleet page tells its whole story from the item's events: the request
its turn made and who answered it, the failed turn, the park and the resume, a held comment — and
each comment's row names its author, a short sanitized excerpt and its link on GitHub."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from adapters.eventlog.reader import Tail
from app.usecases.views.fleet import Fleet
from app.web.auth import Guard
from app.web.feed import Feed
from app.web.http import Request, Response
from app.web.journey import journeys
from app.web.page import FleetPage
from domain.events import Event
from domain.redaction import FIRST_WORDS
from domain.refs import WorkItemRef
from tests.service.world import World

TOKEN = "t0ken-for-the-page"
ITEM = "o/r#1"
URL = "https://github.com/o/r/issues/1#issuecomment-7"


def _at(second: int) -> str:
    return f"2026-01-01T12:00:{second:02d}+00:00"


def _records(*steps: tuple[int, str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"ts": _at(s), "event": e, "work_item": ITEM, **fields} for s, e, fields in steps]


def _labels(found: list[Any], comment: str) -> list[str]:
    return [stop.label for stop in next(j for j in found if j.comment_id == comment).stops]


STORY = _records(
    (0, "dispatch.queued", {"comment_id": "7", "attempt": 1, "author": "alice", "excerpt": "add a test", "url": URL}),
    (1, "dispatch.pasted", {"comment_id": "7", "attempt": 1}),
    (2, "dispatch.confirmed", {"comment_id": "7", "confirmed_by": "receipt"}),
    (5, "session.asked", {"request": 3, "kind": "permission", "tool": "Bash"}),
    (9, "session.answered", {"comment_id": "9", "request": 3, "answer": "allow", "author": "bob"}),
    (9, "control.executed", {"comment_id": "9", "verb": "allow"}),
    (20, "session.parked", {"comment_id": "7", "cause": "rate_limit", "until": _at(50), "rule": "named_reset"}),
    (21, "comment.held", {"comment_id": "8", "author": "carol", "rule": "the-loop pause"}),
    (50, "session.unparked", {"comments": ["7"], "by": "reset"}),
)


def test_a_turns_request_and_who_answered_it_which_and_when_are_on_its_comments_journey() -> None:
    labels = _labels(journeys(STORY), "7")

    assert labels[4:6] == ["asked request 3: permission to use Bash", "request 3: allow by @bob after 4s"]


def test_the_answer_comment_says_which_request_it_answered() -> None:
    assert _labels(journeys(STORY), "9") == ["seen (poll)", "request 3: allow by @bob after 4s", "control: allow"]


def test_an_answer_from_the_page_says_so() -> None:
    found = journeys(
        [*STORY[:4], *_records((9, "session.answered", {"request": 3, "answer": "deny", "source": "page"}))]
    )

    assert _labels(found, "7")[-1] == "request 3: deny from the page after 4s"
    assert [j.comment_id for j in found] == ["7"]


def test_the_failed_turn_the_park_and_the_resume_are_on_the_failed_comments_journey() -> None:
    labels = _labels(journeys(STORY), "7")

    assert labels[6:] == [
        "turn failed: rate_limit",
        "parked: until 12:00:50 UTC (named_reset)",
        "resumed: reset",
    ]


def test_a_held_comment_says_what_holds_it() -> None:
    assert _labels(journeys(STORY), "8") == ["seen (poll)", "held: the-loop pause"]


def test_a_comments_row_names_its_author_a_short_excerpt_and_its_link() -> None:
    found = {j.comment_id: j for j in journeys(STORY)}

    assert (found["7"].author, found["7"].excerpt, found["7"].url) == ("alice", "add a test", URL)
    assert found["8"].author == "carol"


def _item_page(world: World, log: Path, ref: WorkItemRef) -> str:
    fleet = Fleet(admin=world.admin(), uow=world.uow, cluster=world.cluster, tmux=world.tmux)  # type: ignore[arg-type]
    page = FleetPage(fleet=fleet, feed=Feed(log, Tail), guard=Guard(TOKEN), now=world.clock.now, where="here")
    answer = page(Request("GET", "/item", {"ref": str(ref)}, {"authorization": f"Bearer {TOKEN}"}))
    assert isinstance(answer, Response)
    return answer.body.decode()


def test_the_row_shows_the_excerpt_sanitized_and_escaped_and_links_to_github(tmp_path: Path) -> None:
    world = World()
    ref = world.watched(1)
    log = tmp_path / "events.jsonl"
    fields = {"comment_id": "7", "attempt": 1, "author": "alice", "excerpt": "<b>bold</b>\u202e evil\x07", "url": URL}
    log.write_text(json.dumps({"ts": _at(0), "event": "dispatch.queued", "work_item": str(ref), **fields}) + "\n")

    row = _item_page(world, log, ref).split('data-comment="7"')[1].split("<ol")[0]

    assert "@alice" in row and "&lt;b&gt;bold&lt;/b&gt; evil" in row and "\u202e" not in row and "\x07" not in row
    assert f'href="{URL}"' in row and 'rel="noreferrer"' in row


def test_a_row_whose_events_carry_no_link_links_to_the_comment_by_its_id(tmp_path: Path) -> None:
    world = World()
    ref = world.watched(1)
    log = tmp_path / "events.jsonl"
    log.write_text(
        json.dumps({"ts": _at(0), "event": "dispatch.queued", "work_item": str(ref), "comment_id": "7"}) + "\n"
    )

    row = _item_page(world, log, ref).split('data-comment="7"')[1].split("<ol")[0]

    assert f'href="https://github.com/{ref.repo.owner}/{ref.repo.name}/issues/1#issuecomment-7"' in row


def test_the_events_that_take_a_comment_in_say_its_author_first_words_and_address() -> None:
    world = World()
    ref = world.watched(1)
    delivered = world.comment(ref, "please\u202e add\n\na test ghp_" + "a" * 36 + " " + "x" * 200)
    world.comment(ref, "the-loop pause")
    world.cycle()
    held = world.comment(ref, "later")
    world.cycle()

    queued = next(e for e in world.events.named(Event.DISPATCH_QUEUED) if e.get("comment_id") == delivered.id)
    control = world.events.named(Event.CONTROL_EXECUTED)[0]
    waiting = world.events.named(Event.COMMENT_HELD)[0]

    assert (queued["author"], queued["url"]) == ("alice", delivered.url)
    assert queued["excerpt"].startswith("please add a test [redacted] xxx") and queued["excerpt"].endswith("…")
    assert len(queued["excerpt"]) <= FIRST_WORDS
    assert (control["author"], control["excerpt"]) == ("alice", "the-loop pause")
    assert (waiting["comment_id"], waiting["excerpt"], waiting["url"]) == (held.id, "later", held.url)


def test_a_journey_read_from_a_log_with_a_broken_time_still_reads() -> None:
    broken = [{**STORY[3], "ts": "not a time"}, *STORY[4:5]]

    assert _labels(journeys([*STORY[:3], *broken]), "7")[-2:] == [
        "asked request 3: permission to use Bash",
        "request 3: allow by @bob",
    ]
