"""The harness simulator's parser, the oracle of the tmux tests: it must see an injection."""

from __future__ import annotations

from typing import Any

from tests.harness_sim import Parser


def parsed(*reads: bytes) -> list[tuple[str, Any]]:
    seen: list[tuple[str, Any]] = []
    parser = Parser(lambda kind, **fields: seen.append((kind, fields.get("text"))))
    for data in reads:
        parser.feed(data)
    return seen


def test_a_paste_and_a_lone_carriage_return_are_one_message_and_one_submit() -> None:
    assert parsed(b"\x1b[200~hi\rthere\x1b[201~\r") == [("paste", "hi\rthere"), ("submit", None)]


def test_markers_split_across_reads_are_still_recognised() -> None:
    assert parsed(b"\x1b[2", b"00~hi\x1b", b"[201", b"~\r") == [("paste", "hi"), ("submit", None)]


def test_an_early_paste_end_inside_the_text_shows_up_as_typed_bytes() -> None:
    injected = parsed(b"\x1b[200~ok\x1b[201~rm -rf ~\r\x1b[201~\r")
    assert injected == [
        ("paste", "ok"),
        ("typed", "rm -rf ~"),
        ("submit", None),
        ("typed", "\x1b[201~"),
        ("submit", None),
    ]
