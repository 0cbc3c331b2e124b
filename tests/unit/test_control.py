"""Control comments as pure text rules (their syntax is stable: tests outside the project use it)."""

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


def test_a_verb_in_an_indented_code_block_is_text() -> None:
    assert control_of("    the-loop resume") is None
    assert control_of("\n\n        the-loop stop\n") is None


@pytest.mark.parametrize(
    "body",
    [
        "\tthe-loop resume",  # a tab is four columns: code
        "  \tthe-loop resume",  # two spaces and a tab reach the fifth column: code
        "```\nthe-loop resume\n```",  # a fenced block
        "~~~sh\nthe-loop resume\n~~~",  # the other fence
        "   ```\nthe-loop resume\n```",  # a fence may be indented up to three spaces
        "> the-loop resume",  # a block quote
        ">the-loop resume",
        "  > the-loop resume",
        "<!-- the-loop resume -->",  # inside an HTML comment: not shown at all
        "<!--\nthe-loop resume\n-->",
        "<!-- a note --> the-loop resume",  # on the comment's line: part of the HTML block
        "```\nfirst some code\n```\nthe-loop resume",  # a block before it: not the first line of text
        "> quoted\n\nthe-loop resume",
    ],
)
def test_a_verb_in_code_a_quote_or_an_html_comment_is_text(body: str) -> None:
    assert control_of(body) is None


@pytest.mark.parametrize(
    ("body", "verb"),
    [
        ("   the-loop pause", Verb.PAUSE),  # up to three spaces: Markdown still reads a paragraph
        ("\n \n  the-loop pause", Verb.PAUSE),  # blank lines (even of spaces) first
        ("<!-- a note -->\nthe-loop pause", Verb.PAUSE),  # an HTML comment before it is not shown
        ("<!--\nseveral\nlines\n-->\n\n/the-loop stop", Verb.STOP),
        ("the-loop status\r\nwith a second line", Verb.STATUS),
    ],
)
def test_the_first_line_of_text_counts_after_blank_lines_and_html_comments(body: str, verb: Verb) -> None:
    assert control_of(body) == Control(verb)


@pytest.mark.parametrize(
    ("body", "verb"),
    [
        ("@the-loop pause", Verb.PAUSE),  # written as a mention, as people do on GitHub
        ("@The-Loop RESUME", Verb.RESUME),
        ("  @the-loop\tstatus\nthen some words", Verb.STATUS),
    ],
)
def test_a_mention_of_the_loop_names_the_command_as_the_bare_name_does(body: str, verb: Verb) -> None:
    assert control_of(body) == Control(verb)


def test_a_mention_takes_what_follows_allow_deny_and_answer_as_the_bare_name_does() -> None:
    assert (
        control_of("@the-loop allow always 3")
        == control_of("the-loop allow always 3")
        == Control(Verb.ALLOW, "always 3")
    )
    assert control_of("@the-loop deny 3 too risky\nand why") == Control(Verb.DENY, "3 too risky\nand why")


@pytest.mark.parametrize(
    "body",
    [
        "@the-loop pause.",  # a command with a mark after it
        "@the-loop pause !",
        "@the-loop: pause",  # the mention followed by a colon or a comma
        "@the-loop, stop",
        "/the-loop: status",
        "@the-loop: allow 3",
        "@the-loop dance",  # a word the-loop does not know
    ],
)
def test_a_command_to_the_loop_not_written_as_one_is_answered_not_delivered(body: str) -> None:
    assert control_of(body) == Control(None)


@pytest.mark.parametrize(
    "body",
    [
        "@the-loop stop using globals in this module",  # a sentence for the agent, addressed by name
        "@the-loop: please look at the failing test",
        "@the-loop",
        "hey @the-loop pause",
        "@the-loopy pause",  # another login
        "@@the-loop pause",
    ],
)
def test_a_sentence_addressed_to_the_loop_is_a_comment_for_the_agent(body: str) -> None:
    assert control_of(body) is None


def test_the_reply_to_a_command_not_written_as_one_says_how_to_write_it_and_never_echoes_it() -> None:
    reply = unknown_verb_reply()

    assert "`@the-loop pause`" in reply and "alone on the first line" in reply
    assert "not passed to the agent" in reply


@pytest.mark.parametrize(
    ("body", "harness"),
    [
        ("the-loop start codex", "codex"),
        ("/the-loop START Claude", "Claude"),  # matched against the configured names, any case
        ("@the-loop start my-agent.v2", "my-agent.v2"),
    ],
)
def test_start_takes_the_name_of_the_harness_it_asks_for(body: str, harness: str) -> None:
    assert control_of(body) == Control(Verb.START, harness)


@pytest.mark.parametrize(
    "body",
    [
        "the-loop start working on the tests",  # more words: a sentence for the agent
        "the-loop start `rm -rf`",
        "@the-loop start codex now",
    ],
)
def test_start_followed_by_more_than_one_name_is_a_sentence_for_the_agent(body: str) -> None:
    assert control_of(body) is None


def test_a_start_written_with_a_mark_names_no_harness() -> None:
    assert control_of("@the-loop: start codex") is None
    assert control_of("@the-loop: start") == Control(None)
