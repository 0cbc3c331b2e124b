"""The demo harness's screen: pasted messages framed, control bytes shown and never obeyed."""

from __future__ import annotations

from app.demo.harness import Screen


def screen_after(*reads: bytes) -> tuple[Screen, str]:
    shown: list[str] = []
    screen = Screen(out=shown.append)
    for data in reads:
        screen.feed(data)
    return screen, "\n".join(shown)


def test_a_paste_split_across_reads_is_one_framed_message() -> None:
    _, shown = screen_after(b"\x1b[20", b"0~hello\rwor", b"ld\x1b[2", b"01~\r")
    assert shown == "┌─ message 1 (11 bytes)\n│ hello\n│ world\n└─\n↵ submitted (message 1)\n"


def test_control_bytes_inside_a_paste_are_shown_not_obeyed() -> None:
    _, shown = screen_after(b"\x1b[200~\x1b[2J\x07bye\x1b[201~")
    assert ("\x1b" in shown, "\x07" in shown, "␛[2J␇bye" in shown) == (False, False, True)


def test_bytes_typed_outside_a_paste_are_shown_as_typed() -> None:
    _, shown = screen_after(b"ls\x1b[A")
    assert shown == "┌─ typed outside a paste\n│ ls␛[A\n└─"


def test_ctrl_c_typed_outside_a_paste_quits() -> None:
    screen, _ = screen_after(b"\x03")
    assert screen.quit


def test_ctrl_c_inside_a_paste_is_only_text() -> None:
    screen, _ = screen_after(b"\x1b[200~\x03\x1b[201~")
    assert (screen.quit, screen.count) == (False, 1)
