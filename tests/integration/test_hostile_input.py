"""Hostile comment text through the prompt framing and real tmux 3.3 into the recording harness.

Properties over generated bodies, titles, paths and links: the harness gets one bracketed paste
and one submit, not a byte outside them, and no control character reaches it or its screen.
`THE_LOOP_HOSTILE_EXAMPLES` sets the examples per property (the long form: 500).
"""

from __future__ import annotations

import itertools
import os
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.tmux.adapter import ShTmux
from domain.model import Comment, CommentKind, ItemKind, SpawnRequest, WorkItem
from domain.prompts import MAX_UNTRUSTED_BYTES, event_prompt, spawn_prompt
from domain.receipts import receipt_line
from domain.refs import TmuxTarget, WorkItemRef
from tests.tmux_support import RealTmux, records, require_tmux, sim_argv, wait_for

pytestmark = pytest.mark.tmux
MARK = "be" * 16
LINE = receipt_line("poll-comment-1", "0123456789abcdef")

EXAMPLES = int(os.environ.get("THE_LOOP_HOSTILE_EXAMPLES", "25"))
PROPERTY = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
REF = WorkItemRef.parse("github:acme/widgets#7")
A = TmuxTarget("loop-hostile")
TITLE = "the-loop-test"
# Unicode's Bidi_Control characters: they reorder what a reader sees (Trojan Source)
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
ATTACKS = [
    "\x1b[201~",  # ends the bracketed paste: what follows would be typed
    "\x1b[200~",
    "\x1b]52;c;cm0gLXJmIH4K\x07",  # OSC 52: sets the clipboard (a tmux buffer)
    "\x1b]0;pwned\x07",  # OSC 0: sets the pane title
    "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\",
    "\x1bP+q544e\x1b\\",  # DCS
    "\x1bPtmux;\x1b\x1b]52;c;eA==\x07\x1b\\",  # DCS passthrough to the outer terminal
    "\x1b[2J\x1b[H",
    "\x1bc",
    "\x1b[?1049h",
    "\x9b201~",  # C1 CSI
    "\x9d0;pwned\x9c",  # C1 OSC ... ST
    "\x90q\x9c",  # C1 DCS
    "\x85",
    "\x00",
    "\x07",
    "\x08",
    "\x7f",
    "\r",
    "\r\n",
    "\n",
    "\t",
    "\u202e",
    "\u2066",
    "\u200f",
    "\ufffd",
    "\ud800",  # a lone surrogate, as a JSON escape from gh decodes
    "\udcff",  # an invalid byte, as surrogateescape decodes it
    "```",
    "`" * 20,
]
PIECES = (
    st.sampled_from(ATTACKS)
    | st.text(st.characters(exclude_categories=()), max_size=4)  # any code point, surrogates too
    | st.binary(max_size=6).map(lambda raw: raw.decode("utf-8", "surrogateescape"))
    | st.binary(max_size=6).map(lambda raw: raw.decode("utf-8", "replace"))
)
HOSTILE = st.lists(PIECES, max_size=40).map("".join)
ids = itertools.count(1)


def comment(body: str, *, author: str = "alice", path: str | None = None, url: str = "") -> Comment:
    number = next(ids)
    kind = CommentKind.REVIEW_COMMENT if path is not None else CommentKind.ISSUE_COMMENT
    created = datetime(2026, 1, 1, tzinfo=UTC)
    return Comment(f"IC_{number}", REF, author, body, created, url, kind, path, 3 if path is not None else None)


def controls(text: str, *, allowed: str) -> list[str]:
    """The control, bidi-control and surrogate code points in `text` (a surrogate here is a byte
    that was not UTF-8) but `allowed`, spelled so a failure message shows them."""
    bad = (c for c in text if c not in allowed and (c in BIDI_CONTROLS or unicodedata.category(c) in ("Cc", "Cs")))
    return [f"U+{ord(c):04X}" for c in bad]


@dataclass
class Seen:
    """What one delivery or spawn left: the harness's new records, its screen, title, buffers."""

    records: list[dict[str, Any]]
    screen: str
    title: str
    buffers: list[str]

    @property
    def kinds(self) -> list[str]:
        return [r["kind"] for r in self.records]

    @property
    def pasted(self) -> str:
        return "".join(str(r["text"]) for r in self.records if r["kind"] == "paste")


class Rig:
    """One private tmux server (`set-clipboard on`, so an OSC 52 that got through would leave a
    buffer) and one echoing harness that every delivery goes to."""

    def __init__(self, server: RealTmux, tmp: Path) -> None:
        self.server, self.tmp = server, tmp
        self.tmux: ShTmux = server.adapter()
        server.run("start-server", ";", "set-option", "-s", "set-clipboard", "on")
        self.record = tmp / "harness.jsonl"
        self.pane = self.spawn(A, "go", self.record)
        self.host = server.run("display-message", "-p", "#{host}").rstrip("\n")  # a new pane's title

    def spawn(self, target: TmuxTarget, prompt: str, record: Path) -> str:
        argv = sim_argv(record, "--echo")
        pane = self.tmux.spawn(SpawnRequest(target=target, argv=argv, cwd=str(self.tmp), prompt=prompt, mark=MARK))
        wait_for(lambda: "ready" in [r["kind"] for r in records(record)], what=f"{target} listening")
        return pane

    def deliver(self, prompt: str) -> Seen:
        self.clean(self.pane)
        before = len(records(self.record))
        self.tmux.deliver(A, prompt, delivery_id=f"d-{next(ids)}", pane=self.pane, mark=MARK)
        wait_for(lambda: "submit" in [r["kind"] for r in records(self.record)[before:]], what="submit")
        shows = 1 + [r["kind"] for r in records(self.record)].count("paste")  # the prompt, then each paste
        return self.seen(self.pane, self.record, before, shows)

    def spawned(self, prompt: str) -> Seen:
        target = TmuxTarget(f"loop-spawned-{next(ids)}")
        record = self.tmp / f"{target}.jsonl"
        pane = self.spawn(target, prompt, record)
        try:
            return self.seen(pane, record, 0, 1)
        finally:
            self.tmux.kill(target)

    def clean(self, pane: str) -> None:
        """Each example starts with a known title, no buffer and little scrollback. (Not
        `send-keys -R`: resetting the terminal would also end the harness's bracketed paste mode.)"""
        self.server.run("clear-history", "-t", pane, ";", "select-pane", "-T", TITLE, "-t", pane)
        for name in self.server.buffers():
            self.server.run("delete-buffer", "-b", name)

    def seen(self, pane: str, record: Path, before: int, shows: int) -> Seen:
        """What the harness recorded from `before` on, and the screen from the end of its
        previous echo to the end of echo number `shows`."""
        mark, previous = f"[echoed {shows}]", f"[echoed {shows - 1}]"

        def screen() -> str:
            shown = self.server.run("capture-pane", "-p", "-J", "-S", "-", "-E", "-", "-t", pane)
            return shown.rsplit(previous, 1)[-1].split(mark, 1)[0] if mark in shown else ""

        shown = wait_for(screen, timeout=5.0, what=f"{mark} on the screen")
        title = self.server.run("display-message", "-p", "-t", pane, "#{pane_title}").rstrip("\n")
        return Seen(records(record)[before:], shown, title, self.server.buffers())


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    require_tmux()
    server = RealTmux(tmp_path_factory.mktemp("tmux"))
    try:
        yield Rig(server, tmp_path_factory.mktemp("hostile"))
    finally:
        server.kill_server()


def assert_inert(seen: Seen, prompt: str, *, title: str = TITLE) -> None:
    """The prompt arrived whole and changed nothing but the screen's text."""
    paste = seen.pasted
    assert seen.kinds == ["paste", "submit"], seen.records
    assert paste == prompt.replace("\n", "\r")
    assert controls(paste, allowed="\r\t") == []
    assert controls(seen.screen, allowed="\n\t") == []
    assert (seen.title, seen.buffers) == (title, [])


@PROPERTY
@given(body=HOSTILE, author=HOSTILE, path=HOSTILE, url=HOSTILE)
def test_any_comment_arrives_as_one_paste_and_one_submit_with_no_control_character(
    rig: Rig, body: str, author: str, path: str, url: str
) -> None:
    review = replace(comment(body, author=author or "a", path=path, url=url), kind=CommentKind.REVIEW_COMMENT)
    prompt = event_prompt(review, receipt=LINE)
    assert_inert(rig.deliver(prompt), prompt)


@PROPERTY
@given(title=HOSTILE, body=HOSTILE, url=HOSTILE, first=HOSTILE)
def test_any_work_item_spawns_a_harness_whose_prompt_holds_no_control_character(
    rig: Rig, title: str, body: str, url: str, first: str
) -> None:
    item = WorkItem(REF, title, "alice", frozenset({"loop"}), ItemKind.PULL_REQUEST, body, url)
    prompt = spawn_prompt(item, receipt=LINE, first=(comment(first), LINE))
    seen = rig.spawned(prompt)
    assert (seen.kinds, seen.records[0]["prompt"]) == (["start", "ready"], prompt)
    assert controls(prompt, allowed="\n\t") == []
    assert controls(seen.screen, allowed="\n\t") == []
    assert (seen.title, seen.buffers) == (rig.host, [])


def test_a_1_mb_comment_is_capped_visibly_and_still_arrives_as_one_paste(rig: Rig) -> None:
    body = ("x\x1b[201~\r\n\u202e\x9b" * 200_000)[: 1024 * 1024]
    prompt = event_prompt(comment(body), receipt=LINE)
    seen = rig.deliver(prompt)
    assert_inert(seen, prompt)
    assert "the-loop truncated this text" in seen.pasted
    assert len(prompt.encode()) < MAX_UNTRUSTED_BYTES + 2_000


def test_a_1_mb_title_and_body_spawn_capped_within_one_argument(rig: Rig) -> None:
    item = WorkItem(REF, "t\n" * 500_000, "alice", frozenset(), ItemKind.ISSUE, "\x1b]52;c;eA==\x07" * 80_000)
    prompt = spawn_prompt(item, receipt=LINE, first=(comment("\U0001d11e" * 300_000), LINE))
    seen = rig.spawned(prompt)
    assert (seen.kinds, seen.records[0]["prompt"], prompt.count("truncated this text")) == (
        ["start", "ready"],
        prompt,
        3,
    )
    assert seen.buffers == []
