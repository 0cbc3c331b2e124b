"""Control comments as pure text rules (issue 13's syntax is stable: tests outside the project use it)."""

from __future__ import annotations

import pytest

from domain.control import Control, Verb, control_of, triggered, unknown_verb_reply


@pytest.mark.parametrize(
    ("body", "verb"),
    [
        ("the-loop pause", Verb.PAUSE),
        ("/the-loop resume", Verb.RESUME),
        ("THE-LOOP Stop", Verb.STOP),
        ("\n\n   the-loop start  \nand then some words", Verb.START),
        ("/The-Loop\tstatus", Verb.STATUS),
    ],
)
def test_the_first_non_empty_line_alone_names_the_command(body: str, verb: Verb) -> None:
    assert control_of(body) == Control(verb)


@pytest.mark.parametrize(
    "body",
    [
        "please the-loop pause",  # not alone on its line
        "the-loop pause now",  # something else on the line
        "some words\nthe-loop pause",  # not the first non-empty line
        "the-loop",  # no verb
        "`the-loop pause`",
        "theloop pause",
        "",
    ],
)
def test_anything_else_is_a_comment_for_the_agent(body: str) -> None:
    assert control_of(body) is None


def test_an_unknown_verb_is_a_control_comment_with_no_verb_and_its_reply_never_echoes_it() -> None:
    assert control_of("the-loop dance") == Control(None)
    assert "dance" not in unknown_verb_reply()


def test_a_trigger_phrase_matches_in_any_case_and_an_empty_one_matches_everything() -> None:
    assert triggered("hey @The-Loop do it", "@the-loop") and not triggered("hey team", "@the-loop")
    assert triggered("anything", "")
