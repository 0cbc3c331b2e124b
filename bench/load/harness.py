"""The load campaign's harness: the lightest that confirms like Claude Code, one per tmux pane.

Run as `python -S harness.py --record FILE --session-id ID [PROMPT]` (that order). It turns bracketed paste on
in a raw tty and appends one JSON line per prompt to FILE, `{"at": <epoch seconds>, "delivery":
<id>}`, when a paste has arrived whole (a prompt on the argv is recorded at start). With
$THE_LOOP_RECEIPTS set it writes receipts there as Claude Code's hooks would: SessionStart once
listening, then for each prompt submitted UserPromptSubmit and, its turn taking no time, Stop
(with $LIGHT_TURN_SECONDS set, a turn takes a random time up to that many seconds: Stop comes then).
Self-contained and small on purpose: a hundred of these run at once.
"""

import json
import os
import random
import re
import sys
import termios
import threading
import time
import tty

START, END, SUBMIT = b"\x1b[200~", b"\x1b[201~", b"\r"
DELIVERY = re.compile(r"Delivery: (\S+)")


class Harness:
    def __init__(self, record: str, session_id: str) -> None:
        self.record = os.open(record, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self.session_id = session_id
        self.receipts = os.environ.get("THE_LOOP_RECEIPTS", "")
        self.turn_seconds = float(os.environ.get("LIGHT_TURN_SECONDS") or 0)
        self.count = 0
        self._writing = threading.Lock()  # a turn's Stop may come from its timer's thread

    def noted(self, prompt: str) -> None:
        """The harness's record of a paste: one write, so lines of a hundred harnesses never mix."""
        found = DELIVERY.search(prompt)
        line = {"at": time.time(), "delivery": found.group(1) if found else "", "pid": os.getpid()}  # noqa: TID251
        os.write(self.record, (json.dumps(line) + "\n").encode())

    def receipt(self, event: str, **fields: str) -> None:
        if not self.receipts:
            return
        with self._writing:
            self.count += 1
            path = os.path.join(self.receipts, f"{time.time_ns()}-{os.getpid()}-{self.count}")
        with open(path + ".part", "w", encoding="utf-8") as file:
            json.dump({"hook_event_name": event, "session_id": self.session_id, **fields}, file)
        os.replace(path + ".part", path + ".receipt")

    def prompt(self, text: str) -> None:
        self.receipt("UserPromptSubmit", prompt=text)
        if self.turn_seconds > 0:
            turn = threading.Timer(random.uniform(0.1, self.turn_seconds), self.receipt, args=("Stop",))
            turn.daemon = True
            turn.start()
        else:
            self.receipt("Stop")


def listen(harness: Harness) -> None:
    buf, pasted = b"", list[bytes]()
    while data := os.read(0, 65536):
        buf += data
        while True:
            start = buf.find(START)
            end = buf.find(END, start + len(START)) if start >= 0 else -1
            submit = buf.find(SUBMIT)
            if pasted and submit >= 0 and (start < 0 or submit < start):
                harness.prompt(b"".join(pasted).decode("utf-8", "replace").replace("\r", "\n"))
                pasted, buf = [], buf[submit + 1 :]
            elif start >= 0 and end >= 0:
                paste = buf[start + len(START) : end]
                harness.noted(paste.decode("utf-8", "replace"))
                pasted.append(paste)
                buf = buf[end + len(END) :]
            else:
                if start < 0 and not pasted:
                    buf = buf[-len(START) :]  # typed bytes mean nothing here; keep a marker's start
                break


def main(argv: list[str]) -> int:
    """argv: --record FILE --session-id ID [PROMPT], in that order (the load config's)."""
    record, session_id, rest = argv[1], argv[3], argv[4:]
    harness = Harness(record, session_id)
    tty.setraw(0, termios.TCSANOW)
    os.write(1, b"\x1b[?2004hlistening\r\n")
    harness.receipt("SessionStart", source="startup")
    if rest:
        harness.noted(rest[0])
        harness.prompt(rest[0])
    listen(harness)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
