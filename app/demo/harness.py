"""A tiny interactive agent for the demo: shows every message pasted into its pane, framed.

Run as `python -m app.demo.harness [--session-id ID] [--resume ID] [PROMPT]`. Input is
read as bytes and never interpreted: control characters are shown, not obeyed. It confirms what it
got the way the-loop reads Claude Code's hooks: with `$THE_LOOP_RECEIPTS` set (`receipts: file`), a
ready receipt once it listens, and for its first prompt and each submitted paste a prompt receipt and
a turn's end (showing the message is all it does).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import termios
import time
import tty
from collections.abc import Callable
from typing import Any

from domain.prompts import sanitize

PASTE_START, PASTE_END, SUBMIT = b"\x1b[200~", b"\x1b[201~", b"\r"
QUIT = (b"\x03", b"\x04")  # Ctrl-C, Ctrl-D typed by an operator attached read-write


def show(text: str = "") -> None:
    # raw mode turns off output processing: every line needs its own carriage return
    os.write(1, (text.replace("\n", "\r\n") + "\r\n").encode())


def framed(title: str, data: bytes) -> str:
    body = sanitize(data.decode("utf-8", "replace")) or "(empty)"
    lines = "\n".join(f"│ {line}" for line in body.split("\n"))
    return f"┌─ {title}\n{lines}\n└─"


def receipt(event: str, **fields: Any) -> None:
    """One receipt file, written whole (a temp name, then rename), where the-loop reads them."""
    folder = os.environ.get("THE_LOOP_RECEIPTS")
    if not folder:
        return
    path = os.path.join(folder, f"{time.time_ns()}-{os.getpid()}")
    with open(path + ".part", "w", encoding="utf-8") as file:
        json.dump({"hook_event_name": event, **fields}, file)
    os.replace(path + ".part", path + ".receipt")


class Screen:
    """Turns the byte stream into framed messages; keeps a partial marker for the next read."""

    def __init__(self, out: Callable[[str], None] = show, confirm: Callable[..., None] = receipt) -> None:
        self.out = out
        self.confirm = confirm
        self.pending = b""
        self.paste: bytes | None = None  # the paste in progress
        self.unsubmitted = b""  # pasted, not yet submitted
        self.count = 0
        self.quit = False

    def feed(self, data: bytes) -> None:
        self.pending += data
        while self._in_paste() if self.paste is not None else self._outside():
            pass

    def _in_paste(self) -> bool:
        assert self.paste is not None
        at = self.pending.find(PASTE_END)
        if at < 0:
            keep = _partial(self.pending, PASTE_END)
            self.paste += self.pending[: len(self.pending) - keep]
            self.pending = self.pending[len(self.pending) - keep :]
            return False
        self.count += 1
        message = (self.paste + self.pending[:at]).replace(b"\r", b"\n")  # a pasted newline is CR
        self.out(framed(f"message {self.count} ({len(message)} bytes)", message))
        self.unsubmitted += message
        self.paste, self.pending = None, self.pending[at + len(PASTE_END) :]
        return True

    def _outside(self) -> bool:
        at = self.pending.find(PASTE_START)
        end = at if at >= 0 else len(self.pending) - _partial(self.pending, PASTE_START)
        for index, chunk in enumerate(self.pending[:end].split(SUBMIT)):
            if index:
                self.out(f"↵ submitted (message {self.count})\n")
                if self.unsubmitted:
                    self.confirm("UserPromptSubmit", prompt=self.unsubmitted.decode("utf-8", "replace"))
                    self.confirm("Stop")  # showing the message is all this agent does: its turn ends
                    self.unsubmitted = b""
            self.quit = self.quit or any(key in chunk for key in QUIT)
            if chunk and not self.quit:
                self.out(framed("typed outside a paste", chunk))
        if at < 0:
            self.pending = self.pending[end:]
            return False
        self.paste, self.pending = b"", self.pending[at + len(PASTE_START) :]
        return True


def _partial(data: bytes, marker: bytes) -> int:
    """How many trailing bytes of `data` could begin `marker` (wait for the rest)."""
    return next((n for n in range(len(marker) - 1, 0, -1) if data.endswith(marker[:n])), 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="demo-harness")
    parser.add_argument("--session-id", default="")
    parser.add_argument("--resume", default="")
    parser.add_argument("prompt", nargs="?", default="")
    args, _ = parser.parse_known_args(argv)
    if not os.isatty(0):
        print("demo harness: needs a terminal (run it inside tmux)", file=sys.stderr)
        return 2
    saved = termios.tcgetattr(0)
    tty.setraw(0, termios.TCSANOW)
    os.write(1, b"\x1b[?2004h")  # bracketed paste: pastes arrive framed, a CR alone submits
    try:
        greet(args.session_id or args.resume, args.prompt)
        conversation = args.session_id or args.resume
        receipt("SessionStart", source="resume" if args.resume else "startup", session_id=conversation)
        if args.prompt:
            receipt("UserPromptSubmit", prompt=args.prompt)
            receipt("Stop")
        screen = Screen()
        while not screen.quit and (data := os.read(0, 65536)):
            screen.feed(data)
    finally:
        os.write(1, b"\x1b[?2004l")
        termios.tcsetattr(0, termios.TCSANOW, saved)
    return 0


def greet(conversation: str, prompt: str) -> None:
    show(f"the-loop demo harness — conversation {sanitize(conversation) or '(none)'}")
    if prompt:
        show(framed("first prompt", prompt.encode()))
    show("listening: comments delivered by the-loop appear here (Ctrl-C quits)\n")


if __name__ == "__main__":
    sys.exit(main())
