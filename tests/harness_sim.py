"""A harness simulator for tmux tests: records what reaches its terminal as JSON lines.

Run in a tmux pane: `python harness_sim.py --record FILE [options] [PROMPT]`. It enables
bracketed paste on a raw tty and records, one JSON object per line, each with its `pid`:
  {"kind": "start", "prompt": ..., "session_id": ..., "resume": ..., "server": ..., "cwd": ..., "env": [...]}
                                        `server`: the tmux server's pid (from $TMUX), or null; `env`:
                                        $THE_LOOP_RECEIPTS when set (it names the-loop's spawn)
  {"kind": "ready"}                     listening (bracketed paste on, raw mode set)
  {"kind": "paste", "text": ...}        the bytes between ESC[200~ and ESC[201~
  {"kind": "submit"}                    a lone carriage return outside a paste
  {"kind": "typed", "text": ...}        any other byte outside a paste
  {"kind": "signal", "signum": ...}     SIGTERM or SIGHUP ended it (a SIGKILL leaves no line)
Text is UTF-8 decoded with surrogateescape, so any byte survives the JSON round trip.
Input is bytes and is never interpreted. With `--echo` the prompt and each paste are written back
to the terminal as received (a newline or CR as CRLF) and followed by `[echoed N]`, as a harness
shows what it was given: whatever survived into them then acts on the pane's screen.
Self-contained: imports nothing of the project.

With $THE_LOOP_RECEIPTS set (a harness with `receipts: file`) it also writes receipts there as
Claude Code's hooks would: SessionStart once listening, UserPromptSubmit for its argument prompt
and for each pasted text once it is submitted (`--no-receipts-after N`: stop after N prompts, a
harness that goes deaf).

`--remember` appends its own `--session-id` to the `--known-ids` file, as Claude Code keeps a
conversation it can resume later. `--peers` records, right after its start, the pids of the
other harnesses of the same record file started in the same folder that are still running
(`{"kind": "peers", "pids": [...]}`): a harness that starts while another of its work item runs
says so itself.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import termios
import time
import tty
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

START, END, SUBMIT = b"\x1b[200~", b"\x1b[201~", b"\r"


class Receipts:
    """Claude Code's hook JSON, one file each, written whole (temp name, then rename)."""

    def __init__(self, folder: str | None, *, session_id: str, limit: int, turn_ends: bool = False) -> None:
        self.folder, self.session_id, self.limit, self.count = folder, session_id, limit, 0
        self.turn_ends = turn_ends  # each prompt's turn ends at once (a Stop after its UserPromptSubmit)
        self.written = 0

    def __call__(self, event: str, **fields: Any) -> None:
        if not self.folder:
            return
        if event == "UserPromptSubmit":
            self.count += 1
            if self.limit and self.count > self.limit:
                return
        self._write(event, **fields)
        if event == "UserPromptSubmit" and self.turn_ends:
            self._write("Stop")

    def _write(self, event: str, **fields: Any) -> None:
        self.written += 1  # a Stop written in the same nanosecond as its prompt's receipt still sorts after it
        path = os.path.join(self.folder or "", f"{time.time_ns()}-{os.getpid()}-{self.count}-{self.written:06d}")
        with open(path + ".part", "w", encoding="utf-8") as file:
            json.dump({"hook_event_name": event, "session_id": self.session_id, **fields}, file)
        os.replace(path + ".part", path + ".receipt")


class Recorder:
    def __init__(self, path: str) -> None:
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115
        self._pid = os.getpid()  # harnesses may share one record file

    def __call__(self, kind: str, **fields: Any) -> None:
        self._file.write(json.dumps({"kind": kind, "pid": self._pid, **fields}) + "\n")
        self._file.flush()


class Echo:
    """Records, and shows the prompt and each paste on the terminal as received."""

    def __init__(self, record: Recorder, prompt: str | None) -> None:
        self.record, self.prompt = record, prompt
        self.count = 0

    def __call__(self, kind: str, **fields: Any) -> None:
        self.record(kind, **fields)
        if kind == "paste":
            self.show(fields["text"])

    def show(self, shown: str) -> None:
        self.count += 1
        data = shown.encode("utf-8", "surrogateescape").replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        os.write(1, data.replace(b"\n", b"\r\n") + f"\r\n[echoed {self.count}]\r\n".encode())


def text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def partial_tail(buf: bytes, marker: bytes) -> int:
    """Length of the longest tail of `buf` that could be the start of `marker`."""
    for size in range(min(len(buf), len(marker) - 1), 0, -1):
        if marker.startswith(buf[-size:]):
            return size
    return 0


class Parser:
    """Splits the input stream into pastes, submits and typed bytes."""

    def __init__(self, record: Recorder | Echo, receipts: Receipts | None = None) -> None:
        self.record = record
        self.receipts = receipts
        self.buf = b""
        self.paste: bytes | None = None  # bytes of the paste in progress
        self.pasted: list[bytes] = []  # pastes waiting for their submit
        self.submits = 0

    def feed(self, data: bytes) -> None:
        self.buf += data
        while self.buf and self._step():
            pass

    def _step(self) -> bool:
        if self.paste is not None:
            at = self.buf.find(END)
            if at < 0:
                keep = partial_tail(self.buf, END)
                self.paste += self.buf[: len(self.buf) - keep]
                self.buf = self.buf[len(self.buf) - keep :]
                return False
            self.record("paste", text=text(self.paste + self.buf[:at]))
            self.pasted.append(self.paste + self.buf[:at])
            self.paste, self.buf = None, self.buf[at + len(END) :]
            return True
        at = self.buf.find(START)
        end = at if at >= 0 else len(self.buf) - partial_tail(self.buf, START)
        self._outside(self.buf[:end])
        if at < 0:
            self.buf = self.buf[end:]
            return False
        self.paste, self.buf = b"", self.buf[at + len(START) :]
        return True

    def _outside(self, data: bytes) -> None:
        for index, chunk in enumerate(data.split(SUBMIT)):
            if index:
                with whole():
                    if self.receipts is not None and self.pasted:
                        prompt = text(b"".join(self.pasted)).replace("\r", "\n")  # a pasted newline is CR
                        self.receipts("UserPromptSubmit", prompt=prompt)
                        self.pasted.clear()
                    self.record("submit")
                    self.submits += 1
            if chunk:
                self.record("typed", text=text(chunk))


def running(pid: int, record: str) -> bool:
    """`pid` is a harness of this record file, and not a zombie (a pid is never reused unseen)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as file:
            state = file.read().rsplit(")", 1)[1].split()[0]
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            argv = file.read().split(b"\0")
    except (OSError, IndexError):
        return False
    return state not in {"Z", "X"} and os.fsencode(record) in argv


def peers(record: str) -> list[int]:
    """Harnesses of this record file started in this folder that are still running."""
    here, found = os.getcwd(), []
    with open(record, encoding="utf-8") as file:
        for line in file:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            pid = entry.get("pid")
            if entry.get("kind") == "start" and entry.get("cwd") == here and pid != os.getpid() and pid:
                found.append(pid)
    return [pid for pid in dict.fromkeys(found) if running(pid, record)]


def tmux_server() -> int | None:
    """$TMUX is `socket,server pid,session`."""
    parts = os.environ.get("TMUX", "").split(",")
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None


@contextmanager
def whole() -> Iterator[None]:
    """Confirming a prompt and recording it are one step: a SIGTERM or SIGHUP (its tmux server
    gone) waits until both are written. The receipt goes first, so whoever acts on the record line
    (a SIGKILL aimed at it) finds the receipt written; only a SIGKILL between the two can still
    leave a receipt without its line."""
    ending = {signal.SIGTERM, signal.SIGHUP}
    signal.pthread_sigmask(signal.SIG_BLOCK, ending)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, ending)


def on_signal(record: Recorder) -> None:
    def ended(signum: int, frame: object) -> None:
        record("signal", signum=signum)
        os._exit(128 + signum)

    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, ended)


def outliving_child() -> int:
    """A child in the harness's process group that a closed terminal does not end (Gemini CLI's
    relaunched process outlived `tmux kill-session`); SIGTERM ends it."""
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        while True:
            time.sleep(3600)
    return pid


def known_ids(path: str | None) -> set[str]:
    ids = set(os.environ.get("HARNESS_SIM_KNOWN_IDS", "").split())
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as file:
            ids |= set(file.read().split())
    return ids


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--record", required=True)
    parser.add_argument("--session-id")
    parser.add_argument("--resume")
    parser.add_argument("--known-ids")
    parser.add_argument("--remember", action="store_true", help="add --session-id to the --known-ids file")
    parser.add_argument("--peers", action="store_true", help="record the harnesses of this folder still running")
    parser.add_argument("--exit-after", type=int, default=0, help="exit after N submits")
    parser.add_argument("--hang-after", type=int, default=0, help="stop reading after N submits")
    parser.add_argument("--no-receipts-after", type=int, default=0, help="write no prompt receipt after N")
    parser.add_argument("--outlive", action="store_true", help="leave a child ignoring SIGHUP, as Gemini CLI does")
    parser.add_argument("--echo", action="store_true", help="show the prompt and each paste on the terminal")
    parser.add_argument("--turn-ends", action="store_true", help="end each prompt's turn at once (a Stop receipt)")
    parser.add_argument("prompt", nargs="?", default=None)
    args = parser.parse_args()
    record = Recorder(args.record)
    on_signal(record)
    handed = [os.environ["THE_LOOP_RECEIPTS"]] if os.environ.get("THE_LOOP_RECEIPTS") else []
    where = {"server": tmux_server(), "cwd": os.getcwd(), "env": handed}
    record("start", prompt=args.prompt, session_id=args.session_id, resume=args.resume, **where)
    if args.outlive:
        record("child", child=outliving_child())
    if args.peers:  # after its own start line: of two harnesses starting at once, the later sees the other
        record("peers", pids=peers(args.record))
    if args.remember and args.known_ids and args.session_id:
        with open(args.known_ids, "a", encoding="utf-8") as file:
            file.write(args.session_id + "\n")
    conversation = args.resume or args.session_id or ""
    receipts = Receipts(
        os.environ.get("THE_LOOP_RECEIPTS"), session_id=conversation, limit=args.no_receipts_after,
        turn_ends=args.turn_ends,
    )  # fmt: skip
    if args.resume is not None and args.resume not in known_ids(args.known_ids):
        print(f"No conversation found with session ID: {args.resume}", file=sys.stderr)
        record("exit", status=1)
        return 1  # like claude: an unknown --resume exits at once
    echo = Echo(record, args.prompt) if args.echo else None
    return listen(
        echo or record,
        receipts,
        args.prompt,
        exit_after=args.exit_after,
        hang_after=args.hang_after,
        resumed=args.resume is not None,
    )


def listen(
    record: Recorder | Echo,
    receipts: Receipts,
    prompt: str | None,
    *,
    exit_after: int,
    hang_after: int,
    resumed: bool,
) -> int:
    tty.setraw(0, termios.TCSANOW)
    os.write(1, b"\x1b[?2004hharness_sim listening\r\n")
    if isinstance(record, Echo) and record.prompt is not None:
        record.show(record.prompt)
    with whole():
        receipts("SessionStart", source="resume" if resumed else "startup")
        if prompt:
            receipts("UserPromptSubmit", prompt=prompt)
        record("ready")
    stream = Parser(record, receipts)
    while True:
        data = os.read(0, 65536)
        if not data:
            return 0
        stream.feed(data)
        if exit_after and stream.submits >= exit_after:
            record("exit", status=0)
            return 0
        if hang_after and stream.submits >= hang_after:
            record("hang")
            while True:
                time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main())
