"""Ledger rules as pure functions."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from domain.authorize import Authorized
from domain.ledger import Ledger, Resolution, Screen, screen
from domain.model import AGENT_MARKER, Comment
from domain.refs import WorkItemRef

REF = WorkItemRef.parse("github:a/b#1")
T0 = datetime(2026, 1, 1, tzinfo=UTC)
ALICE = Authorized.parse(["alice"])


def _c(cid: str, seconds: int, author: str | None = "alice", body: str = "hi") -> Comment:
    return Comment(cid, REF, author, body, T0 + timedelta(seconds=seconds))


def test_screening_names_why_a_comment_is_not_a_candidate() -> None:
    assert screen(_c("1", 1), authorized=ALICE) is Screen.CANDIDATE
    assert screen(_c("1", 1, author="ALICE"), authorized=ALICE) is Screen.CANDIDATE
    assert screen(_c("1", 1, author="bob"), authorized=ALICE) is Screen.UNAUTHORIZED
    assert screen(_c("1", 1), authorized=Authorized()) is Screen.UNAUTHORIZED
    assert screen(_c("1", 1, author=None), authorized=ALICE) is Screen.NO_AUTHOR
    assert screen(_c("1", 1, body=f"x {AGENT_MARKER}"), authorized=ALICE) is Screen.OURS


def test_a_comment_edited_before_its_first_read_is_a_candidate_only_if_its_editor_is_authorized() -> None:
    by_self = replace(_c("1", 1), edited=True, editor="alice")
    by_other = replace(_c("2", 1), edited=True, editor="mallory")
    by_unknown = replace(_c("3", 1), edited=True)
    assert [screen(c, authorized=ALICE) for c in (by_self, by_other, by_unknown)] == [
        Screen.CANDIDATE,
        Screen.EDITED_BY_OTHER,
        Screen.EDITED_BY_OTHER,
    ]
    ledger = Ledger.first_sight(REF, now=T0).admit([by_self, by_other, by_unknown], authorized=ALICE)
    assert [p.comment.id for p in ledger.pending] == ["1"]


def test_admit_queues_new_candidates_in_creation_order_once() -> None:
    ledger = Ledger.first_sight(REF, now=T0, existing=[_c("0", -1)])
    ledger = ledger.admit([_c("3", 5), _c("2", 5), _c("1", 9), _c("0", -1)], authorized=ALICE)
    ledger = ledger.admit([_c("3", 5)], authorized=ALICE)
    assert [p.comment.id for p in ledger.pending] == ["2", "3", "1"]


def test_a_comment_stamped_before_first_sight_by_a_clock_behind_ours_is_still_admitted() -> None:
    ledger = Ledger.first_sight(REF, now=T0).admit([_c("1", -30)], authorized=ALICE)
    assert [p.comment.id for p in ledger.pending] == ["1"]


def test_one_newness_rule_a_comment_from_before_the_item_was_armed_is_never_admitted() -> None:
    armed = Ledger.first_sight(REF, now=T0, armed_at=T0).admit([_c("1", -1), _c("2", 0)], authorized=ALICE)
    legacy = Ledger.first_sight(REF, now=T0).admit([_c("3", -3600), _c("4", -60)], authorized=ALICE)
    assert ([p.comment.id for p in armed.pending], [p.comment.id for p in legacy.pending]) == (["2"], ["4"])


def test_a_comment_in_the_same_second_as_the_arming_is_new_the_tracker_stamps_whole_seconds() -> None:
    # GitHub writes `created_at` to the second; the arming time can come from our clock (a watch
    # start, an operator's reset) with microseconds. A comment 0.7 s after the arming reads as
    # 0.3 s before it: it must still be admitted, and the first sight must not baseline it.
    armed_at = T0 + timedelta(milliseconds=300)
    same_second = _c("1", 0)
    ledger = Ledger.first_sight(REF, now=armed_at, existing=[same_second, _c("0", -1)], armed_at=armed_at)
    ledger = ledger.admit([same_second, _c("0", -1)], authorized=ALICE)
    assert ([p.comment.id for p in ledger.pending], sorted(ledger.resolved)) == (["1"], ["0"])
    assert ledger.history([same_second, _c("0", -1)]) == [_c("0", -1)]


def test_history_brought_again_is_set_aside_once_and_only_an_authorized_authors() -> None:
    ledger = Ledger.first_sight(REF, now=T0, armed_at=T0)
    old, stranger, new = _c("1", -5), _c("2", -5, author="bob"), _c("3", 5)
    tampered = replace(_c("4", 5), edited=True, editor="mallory")
    ledger, aside = ledger.set_aside([old, stranger, new, old, tampered], now=T0, authorized=ALICE)
    again, aside_again = ledger.set_aside([old, tampered], now=T0, authorized=ALICE)
    assert (aside, aside_again, again) == ([(old, "before-armed"), (tampered, "edited-by-other")], [], ledger)
    assert (ledger.resolved["1"].kind, ledger.resolved["4"].kind) == (Resolution.BASELINED, Resolution.SKIPPED)
    assert "2" not in ledger.resolved and "3" not in ledger.resolved


def test_attempts_count_and_the_budget_is_spent_at_max_retries() -> None:
    ledger = Ledger.first_sight(REF, now=T0).admit([_c("1", 1)], authorized=ALICE)
    ledger = ledger.attempt("1").attempt("1")
    assert ledger.attempts("1") == 2
    assert not ledger.budget_spent("1", max_retries=3)
    assert ledger.attempt("1").budget_spent("1", max_retries=3)


def test_rearm_revives_only_what_another_version_abandoned() -> None:
    ledger = Ledger.first_sight(REF, now=T0).admit([_c("1", 1), _c("2", 2)], authorized=ALICE)
    ledger = ledger.attempt("1").resolve("1", Resolution.ABANDONED, at=T0, version="1.0")
    ledger = ledger.attempt("2").resolve("2", Resolution.ABANDONED, at=T0, version="2.0")

    same, none = ledger.rearm(running_version="2.0")[0].rearm(running_version="2.0")
    revived, ids = ledger.rearm(running_version="2.0")

    assert none == () and same.resolved["2"].kind is Resolution.ABANDONED
    assert ids == ("1",)
    assert [(p.comment.id, p.attempts) for p in revived.pending] == [("1", 0)]


def test_skipped_and_delivered_comments_are_never_admitted_again() -> None:
    ledger = Ledger.first_sight(REF, now=T0).admit([_c("1", 1), _c("2", 2)], authorized=ALICE)
    ledger = ledger.resolve("1", Resolution.SKIPPED, at=T0).resolve("2", Resolution.DELIVERED, at=T0)
    assert ledger.admit([_c("1", 1), _c("2", 2)], authorized=ALICE).pending == ()


M = AGENT_MARKER


@pytest.mark.parametrize(
    "body",
    [
        f"{M}\n> 🤖 **the-loop** status of github:a/b#1",  # as the-loop writes it: the first line
        f"Fixed in the branch.\n\n{M}",  # as the agent is told: a line of its own
        f"  {M}\r\nDone.",
        f"Done. {M}",  # raw in the text (hidden when shown): still the agent's mark
    ],
)
def test_a_comment_carrying_the_marker_as_written_is_ours(body: str) -> None:
    assert screen(_c("1", 1, body=body), authorized=ALICE) is Screen.OURS


@pytest.mark.parametrize(
    "body",
    [
        f"Why was my comment with `{M}` in it skipped?",  # in a code span
        f"This is what it puts first:\n```\n{M}\n```\nPlease review.",  # in a fenced block
        f"~~~html\n{M}\n~~~",
        f"The marker:\n\n    {M}\n\nplease check",  # in an indented code block
        f"> {M}\n> 🤖 **the-loop**: the agent is closed\n\nReopened now, please retry.",  # a quote reply
        f"> {M}\ncontinued lazily in the quote\n\nplease retry",
    ],
)
def test_an_authorized_comment_that_merely_mentions_the_marker_is_a_candidate(body: str) -> None:
    assert screen(_c("1", 1, body=body), authorized=ALICE) is Screen.CANDIDATE


BOT = "acme-loop[bot]"


def test_a_comment_by_the_apps_bot_without_the_marker_is_ours() -> None:
    by_the_app = Comment("1", REF, BOT, "Starting on it.", T0, by_us=True)
    assert by_the_app.is_ours
    assert screen(by_the_app, authorized=Authorized.parse([BOT])) is Screen.OURS


def test_a_person_quoting_the_marker_is_not_ours_in_app_mode_either() -> None:
    quoted = Comment("1", REF, "alice", f"> {M}\n> 🤖 **the-loop**: closed\n\nplease retry", T0, by_us=False)
    assert not quoted.is_ours
    assert screen(quoted, authorized=ALICE) is Screen.CANDIDATE


def test_a_person_writing_the_marker_in_prose_is_ours_as_with_a_personal_token() -> None:
    # a personal token: the-loop and the agent post as the operator, whose marker alone says so
    marked = Comment("1", REF, "alice", f"Fixed in the branch.\n\n{M}", T0, by_us=False)
    assert marked.is_ours and not replace(marked, body="Fixed in the branch.").is_ours


def test_a_login_is_authorized_only_on_its_host() -> None:
    enterprise = WorkItemRef.parse("github:ghe.example.com/a/b#1")
    on_ghe = Comment("1", enterprise, "alice", "hi", T0)
    assert screen(on_ghe, authorized=ALICE) is Screen.UNAUTHORIZED
    assert screen(on_ghe, authorized=Authorized.parse(["GHE.example.com/Alice"])) is Screen.CANDIDATE
    assert screen(_c("2", 1), authorized=Authorized.parse(["ghe.example.com/alice"])) is Screen.UNAUTHORIZED
