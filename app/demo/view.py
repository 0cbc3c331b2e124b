"""What `demo` prints: what it did, what the pane shows, and exactly how to go on from there."""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from app.cli.events_view import _visible as visible  # the one escaper of untrusted text for a terminal
from app.cli.events_view import as_row, line
from app.demo.run import DemoReport

if TYPE_CHECKING:
    from app.config.settings import Settings  # a type only: the demo's parser stays light

_PANE_LINES = 8
_NOTABLE = {"warning", "error"}


def report_lines(
    report: DemoReport, *, settings: Settings, events: Sequence[Mapping[str, Any]], tmux: str, app: str
) -> list[str]:
    record, comment = report.record, report.comment
    item, target = record.item, record.target
    socket = shlex.quote(settings.tmux_socket or "")  # never empty: the demo refuses the default server
    return [
        f"the-loop demo — {visible(tmux)}, private tmux server {socket}, state in {settings.state_root}/",
        "",
        f"1. opened sandbox work item {item} (labelled, by an authorized user: armed)",
        f"2. poll cycle: first sight; session spawned in tmux session {target}"
        f" (harness {record.harness}, conversation {record.harness_session_id})",
        f"3. commented on it as {visible(comment.author or '')} (comment {comment.id}): {visible(comment.body)}",
        f"4. poll cycle: comment {comment.id} delivered into {target} ({comment.delivery_id})",
        "",
        f"events of this run: {_summary(events)}",
        *(f"  {line(as_row(r))}" for r in events if r.get("level") in _NOTABLE),
        "",
        "the pane shows now:",
        *(f"  {visible(text)}" for text in _tail(report.screen)),
        "",
        "watch the session (read-only; detach with Ctrl-b d):",
        f"  tmux -L {socket} attach -r -t {target}",
        f"  {app} sessions attach --work-item {item} --read-only",
        "post another comment, then deliver it with one cycle, or run the daemon (Ctrl-C stops it):",
        f"  {app} sandbox comment --work-item {item} --body 'your instruction'",
        f"  {app} poll --once",
        f"  {app} poll",
        *_page(settings),
        "see what happened:",
        f"  {app} events --work-item {item}",
        f"  {app} sandbox list",
        f"each run opens a new item; to end every demo session: tmux -L {socket} kill-server",
        'on your own repositories, for real (README.md, "Running it for real"): write a configuration, check it',
        f"  {app} init --repo OWNER/REPO --user YOUR_LOGIN && {app} doctor",
    ]


def _page(settings: Settings) -> list[str]:
    ui = settings.ui
    if not ui.enabled:
        return []
    port = ui.port or "PORT"  # 0: a free port, which `poll` prints when it starts
    return [f"  the fleet page, while `poll` runs: http://{ui.host}:{port}/"]


def _summary(events: Sequence[Mapping[str, Any]]) -> str:
    counts = Counter(str(r.get("event", "?")) for r in events)  # first appearance keeps its place
    return ", ".join(name if n == 1 else f"{name} ×{n}" for name, n in counts.items()) or "(none)"


def _tail(screen: str) -> list[str]:
    lines = screen.rstrip("\n").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    return lines[-_PANE_LINES:] or ["(empty)"]
