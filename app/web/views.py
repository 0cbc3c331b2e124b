"""The page's HTML, rendered on the server: every value escaped, the pane's lines sanitized."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from html import escape
from importlib.resources import files
from string import Template
from typing import Any
from urllib.parse import quote

from app.usecases.cluster.cluster_view import ClusterView
from app.usecases.views.costs import Tally, money, running, turn_said, turns
from app.usecases.views.fleet import SCREEN_LINES, Held, ItemRow
from app.web.journey import Journey
from app.web.paging import EventsPage, Numbered
from app.web.states import HOST_TONES, STATES, shown
from app.web.words import field_name, labelled, time_tag
from domain.asks import Ask, AskKind, OpenRequest, tool_name
from domain.durations import duration
from domain.fleet import ItemState, ItemStatus
from domain.prompts import readable
from domain.redaction import first_words
from domain.refs import DEFAULT_HOST, WorkItemRef
from domain.spending import TurnCost

_TEMPLATE = Template(files("app.web").joinpath("templates/page.html").read_text(encoding="utf-8"))
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b.")
SORTS: dict[str, Callable[[ItemRow], tuple[Any, ...]]] = {
    "item": lambda r: (str(r.item),),
    "host": lambda r: (r.host, str(r.item)),
    "state": lambda r: (r.state.value, str(r.item)),
    "pending": lambda r: (-r.pending, str(r.item)),
}


@dataclass(frozen=True, slots=True)
class Html:
    """A value already rendered (a `<time>`): shown as it is, where any other value is escaped."""

    text: str


def page(*, title: str, body: str, where: str, controls: str = "", live: bool = True) -> str:
    """A whole page; `live`: it follows the server's events (not the sign-in form: no token yet)."""
    return _TEMPLATE.substitute(
        title=escape(title),
        body=body,
        where=escape(where),
        controls=controls,
        live="1" if live else "",
        status="connecting…" if live else "",
    )


def item_url(item: WorkItemRef) -> str:
    host = "github.com" if item.repo.host == DEFAULT_HOST else item.repo.host
    return f"https://{host}/{item.repo.owner}/{item.repo.name}/issues/{item.number}"


def item_link(item: WorkItemRef) -> str:
    return f"/item?ref={quote(str(item), safe='')}"


def tag(state: ItemState) -> str:
    look, meaning = shown(state), state.meaning
    said = escape(f"{meaning.means}. Do: {meaning.do}")
    return (
        f'<span class="tag {look.tone}" data-state="{escape(state.value)}" data-tone="{meaning.tone.value}" '
        f'title="{said}">{escape(look.label)}</span>'
    )


def state_block(shows: ItemStatus, held: Sequence[Held], now: datetime) -> str:
    """One item's state in words, what to do, and its comments waiting with what holds each."""
    meaning = shows.meaning
    waiting = "".join(
        f'<li data-held="{escape(h.comment_id)}">comment {escape(h.comment_id)}'
        + (f": {escape(h.said)}" if h.said else ": waits its turn")
        + "</li>"
        for h in held
    )
    return (
        f'<p class="state" data-state-line="{escape(shows.state.value)}">{escape(shows.line(now))} — '
        f"{escape(meaning.means)}. Do: {escape(meaning.do)}.</p>"
        f'<h2 id="held">Comments waiting <small>({len(held)})</small></h2>'
        f'<ul class="held">{waiting or "<li>none</li>"}</ul>'
    )


HOST_COLUMNS = ("host", "state", "heartbeat", "sessions", "free", "leases")


def hosts_table(view: ClusterView, leases: Mapping[str, float], *, now: datetime) -> str:
    rows = []
    for host in view.hosts:
        lease = leases.get(host.host)
        health = "–" if lease is None else f"soonest expiry in {duration(lease, parts=1, spoken=True)}"
        here = " (this host)" if host.host == view.host else ""
        beat = time_tag(now - timedelta(seconds=host.heartbeat_age_seconds), now=now)
        cells = (
            f"{escape(host.host)}{here}",
            f'<span class="tag {HOST_TONES.get(host.state.value, "off")}">{host.state.value}</span>',
            beat, f"{host.leases}/{host.max_sessions}", str(host.free), health,
        )  # fmt: skip
        # each cell names its column: at phone width the row is a block of labelled cells
        labelled_cells = "".join(f'<td data-label="{c}">{v}</td>' for c, v in zip(HOST_COLUMNS, cells, strict=True))
        rows.append(f'<tr data-host="{escape(host.host)}">{labelled_cells}</tr>')
    head = "<tr>" + "".join(f"<th>{column}</th>" for column in HOST_COLUMNS) + "</tr>"
    return f'<h2 id="hosts">Hosts</h2><table class="hosts"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'


def filter_form(state: str, sort: str) -> str:
    options = "".join(
        f'<option value="{key.value}"{" selected" if key.value == state else ""}>{escape(look.label)}</option>'
        for key, look in STATES.items()
    )
    sorts = "".join(f"<option{' selected' if key == sort else ''}>{key}</option>" for key in SORTS)
    return (
        '<form class="controls" method="get" action="/"><label>state <select name="state">'
        f'<option value="">all</option>{options}</select></label> '
        f'<label>sort <select name="sort">{sorts}</select></label> <button type="submit">show</button></form>'
    )


def items_table(
    rows: Sequence[ItemRow], *, now: datetime, state: str = "", sort: str = "item", costs: Mapping[str, Tally] = {}
) -> str:
    """Each row with its item's running total from `costs` (by `str(item)`)."""
    counts = Counter(row.state for row in rows)
    chips = "".join(
        f'<li><a href="/?state={escape(key.value)}">{tag(key)} <b data-count="{escape(key.value)}">{count}</b></a></li>'
        for key, count in sorted(counts.items(), key=lambda kc: kc[0].value)
    )
    wanted = sorted((r for r in rows if not state or r.state.value == state), key=SORTS.get(sort, SORTS["item"]))
    body = "".join(_item_row(row, now, costs.get(str(row.item))) for row in wanted)
    head = (
        "<tr><th>item</th><th>host</th><th>agent</th><th>memory</th><th>state</th><th>last receipt</th><th>pending</th>"
        "<th>cost (estimated)</th><th>GitHub</th></tr>"
    )
    return (
        f'<h2 id="items">Items <small>({len(wanted)} of {len(rows)})</small></h2><ul class="counts">{chips}</ul>'
        f'<table class="items"><thead>{head}</thead><tbody>{body}</tbody></table>'
    )


def _item_row(row: ItemRow, now: datetime, cost: Tally | None) -> str:
    receipt = receipt_said(row, now)
    ref = escape(str(row.item))
    return (
        f'<tr data-item="{ref}"><td><a href="{item_link(row.item)}">{ref}</a> {escape(sanitized(row.title))}</td>'
        f"<td>{escape(row.host)}</td><td>{escape(row.harness) or '–'}</td><td>{row.memory or '–'}</td>"
        f"<td>{tag(row.state)}</td><td>{receipt}</td><td>{row.pending}</td>{_cost_cell(cost)}"
        f'<td><a href="{escape(item_url(row.item))}" rel="noreferrer">#{row.item.number}</a></td></tr>'
    )


def _cost_cell(tally: Tally | None) -> str:
    """An item's running total; its turns and what it leaves out in the title."""
    said = f"{turns(tally.turns)}: {money(tally)}, {tally.tokens:,} tokens" if tally else "no turn's cost kept"
    return f'<td data-cost="{escape(running(tally))}" title="{escape(said)}">{escape(running(tally))}</td>'


def receipt_said(row: ItemRow, now: datetime, *, none: str = "–") -> str:
    """The last receipt's kind and when it came (HTML)."""
    return f"{escape(row.last_receipt)} {time_tag(row.receipt_at, now=now)}" if row.last_receipt else none


def daemon_panel(facts: Mapping[str, Any]) -> str:
    """Each fact under its name; a cycle's figure named in words (`last cycle: duration (ms)`),
    its `data-fact` the log's key, which the script fills from a tick."""
    cells = "".join(
        f'<div><dt>{escape(_fact_words(k))}</dt><dd data-fact="{escape(k)}">'
        f"{v.text if isinstance(v, Html) else escape(str(v))}</dd></div>"
        for k, v in facts.items()
    )
    return f'<h2 id="daemon">Daemon</h2><dl class="daemon">{cells}</dl>'


def comment_url(item: WorkItemRef, comment_id: str) -> str:
    """A comment's address built from its item and id, for one whose events carry none (an issue
    comment's anchor: a review comment's own address is what the tracker said of it)."""
    return f"{item_url(item)}#issuecomment-{quote(comment_id, safe='')}"


def _comment_head(journey: Journey, item: WorkItemRef) -> str:
    """Who wrote the comment, its first words (as the page shows every untrusted text: sanitized,
    escaped) and its link on GitHub."""
    url = journey.url if journey.url.startswith("https://") else comment_url(item, journey.comment_id)
    author = f" by @{escape(sanitized(journey.author))}" if journey.author else ""
    excerpt = f" <q>{escape(sanitized(journey.excerpt))}</q>" if journey.excerpt else ""
    return (
        f"<b>comment {escape(journey.comment_id)}</b>{author}{excerpt}"
        f' <a href="{escape(url)}" rel="noreferrer">on GitHub</a>'
    )


def journeys_list(
    found: Iterable[Journey], now: datetime, item: WorkItemRef, costs: Mapping[str, TurnCost] = {}
) -> str:
    """Each comment's journey, and what its turn cost when one ended (`costs` by comment id)."""
    items = []
    for journey in found:
        stops = "".join(
            f'<li class="{stop.tone}">{escape(stop.label)}'
            + (f" <small>+{duration(stop.after_seconds, parts=1)}</small>" if stop.after_seconds is not None else "")
            + "</li>"
            for stop in journey.stops
        )
        items.append(
            f'<li data-comment="{escape(journey.comment_id)}">{_comment_head(journey, item)}'
            f'<ol class="journey">{stops}</ol>{_turn_cost(costs.get(journey.comment_id))}</li>'
        )
    return f'<h2 id="comments">Comments</h2><ul class="comments">{"".join(items) or "<li>none yet</li>"}</ul>'


def _turn_cost(cost: TurnCost | None) -> str:
    """Its four counts and money, or that its usage is unknown ("": no turn of it ended)."""
    return f'<p class="turn-cost">its turn: {escape(sanitized(turn_said(cost)))}</p>' if cost else ""


def _fact_words(key: str) -> str:
    head, colon, figure = key.partition(": ")
    return f"{head}: {field_name(figure)}" if colon else key


def events_list(records: Sequence[Numbered], *, now: datetime, pager: str = "") -> str:
    """The records given, each its time, its event and its own fields labelled in words."""
    lines = []
    for seq, record in records:
        fields = "".join(
            f"<div><dt>{escape(sanitized(name))}</dt><dd>{escape(sanitized(value))}</dd></div>"
            for name, value in labelled(record)
        )
        lines.append(
            f'<tr data-seq="{seq}"><td>{time_tag(record.get("ts"), now=now)}</td>'
            f"<td><code>{escape(sanitized(str(record.get('event', ''))))}</code></td>"
            f'<td><dl class="fields">{fields}</dl></td></tr>'
        )
    head = "<tr><th>time</th><th>event</th><th>details</th></tr>"
    return (
        f'<section class="events"><h2 id="events">Events</h2><table class="events"><thead>{head}</thead>'
        f"<tbody>{''.join(lines) or '<tr><td colspan=3>none yet</td></tr>'}</tbody></table>{pager}</section>"
    )


def events_pager(item: WorkItemRef, shown: EventsPage) -> str:
    """Newer and older events: GET forms, so a page of them is an address (reload, back, the
    live refresh all keep it) and each is a button a keyboard reaches."""
    buttons = [
        f'<form method="get" action="/item"><input type="hidden" name="ref" value="{escape(str(item))}">'
        f'<button name="{name}" value="{seq}">{label}</button></form>'
        for name, seq, label in (("after", shown.newer, "← newer events"), ("before", shown.older, "older events →"))
        if seq is not None
    ]
    return f'<nav class="pager" aria-label="events pages">{"".join(buttons)}</nav>' if buttons else ""


def sanitized(text: str) -> str:
    """Terminal escapes removed, then control characters and bidirectional controls dropped:
    nothing reaches the browser raw, and every printable character (NBSP, CJK, emoji) as it is."""
    return readable(_ESCAPES.sub("", text))


def screen_block(screen: str) -> str:
    """The pane's last SCREEN_LINES lines with text, each whole (the empty rows below the last are
    not lines of it); split on newlines only, as tmux ends its rows."""
    lines = sanitized(screen).split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    shown = "\n".join(lines[-SCREEN_LINES:])
    return (
        '<h2 id="pane">The pane\'s last lines <small>(a snapshot, read-only)</small></h2>'
        f'<pre class="screen">{escape(shown) or "(nothing to show: its session runs elsewhere)"}</pre>'
    )


def actions(item: WorkItemRef, *, csrf: str, paused: bool, closed: bool) -> str:
    if not csrf:
        return '<p class="off">Actions need <code>ui.token</code>.</p>'
    chosen = ["resume" if paused else "pause", "reopen" if closed else "close", "reset"]
    forms = "".join(
        f'<form method="post" action="/action"><input type="hidden" name="csrf" value="{escape(csrf)}">'
        f'<input type="hidden" name="ref" value="{escape(str(item))}">'
        f'<button name="action" value="{verb}">{verb}</button></form> '
        for verb in chosen
    )
    return f'<h2 id="actions">Actions</h2><div class="actions">{forms}</div>'


def requests_block(item: WorkItemRef, opened: Sequence[OpenRequest], *, csrf: str) -> str:
    """The requests the item's agent waits on, each with the buttons that answer it as an authorized
    comment would; the agent's words (a tool's input, a question and its options) sanitized and escaped."""
    if not opened:
        return ""
    rows = []
    for request in opened:
        ask, number = request.ask, str(request.number)
        link = comment_url(item, request.comment_id) if request.comment_id else item_url(item)
        when = f" · asked {request.ask.at:%H:%M:%S} UTC" if request.ask.at else ""
        head = f"<b>request {escape(number)}</b>: {_asked(ask)}{when} · "
        head += f'<a href="{escape(link)}" rel="noreferrer">on GitHub</a>'
        buttons = (
            _answer_buttons(item, number, ask, csrf) if csrf else ' <span class="off">(answers need ui.token)</span>'
        )
        rows.append(f'<li data-request="{escape(number)}">{head}<div class="actions">{buttons}</div></li>')
    return f'<h2 id="requests">Requests</h2><ul class="requests">{"".join(rows)}</ul>'


def _asked(ask: Ask) -> str:
    if ask.kind is AskKind.PERMISSION:
        shown = first_words(json.dumps(ask.tool_input, ensure_ascii=False), limit=160)
        return f"permission to use <code>{escape(tool_name(ask))}</code> <code>{escape(sanitized(shown))}</code>"
    asked = "; ".join(first_words(q.text, limit=160) for q in ask.questions())
    return f"a question: <q>{escape(sanitized(asked))}</q>"


def _answer_buttons(item: WorkItemRef, number: str, ask: Ask, csrf: str) -> str:
    def form(verb: str, label: str, extra: str = "") -> str:
        return (
            f'<form method="post" action="/action"><input type="hidden" name="csrf" value="{escape(csrf)}">'
            f'<input type="hidden" name="ref" value="{escape(str(item))}">'
            f'<input type="hidden" name="request" value="{escape(number)}">{extra}'
            f'<button name="action" value="{escape(verb)}">{escape(label)}</button></form> '
        )

    questions = ask.questions() if ask.kind is AskKind.QUESTION else ()
    deny = form("deny", "deny" if not questions else "decline",
                '<input name="reason" placeholder="reason (optional)" aria-label="reason"> ')  # fmt: skip
    if not questions:
        always = form("allow always", "allow always") if ask.session_rules else ""
        return form("allow", "allow") + always + deny
    if len(questions) == 1:
        picks = "".join(
            form("answer", sanitized(option), f'<input type="hidden" name="option" value="{n}">')
            for n, option in enumerate(questions[0].options, start=1)
        )
        return picks + deny
    typed = '<input name="option" placeholder="one option number per question" aria-label="options" required> '
    return form("answer", "answer", typed) + deny


def login_form(message: str = "") -> str:
    note = f'<p class="notice" role="alert">{escape(message)}</p>' if message else ""
    return (
        f'<h2>Sign in</h2>{note}<form method="post" action="/login"><label>token '
        '<input type="password" name="token" autocomplete="current-password" autofocus required></label> '
        '<button type="submit">sign in</button></form>'
    )


def refusal(said: str, remedy: str, back: str, label: str) -> str:
    """An action not done: why, what to do, and the way back (all the page's own words)."""
    return (
        f'<h2>Not done</h2><p class="notice" role="alert">Refused: {escape(said)}.</p>'
        f"<p>What to do: {escape(remedy)}.</p>"
        f'<p><a href="{escape(back)}">{escape(label)}</a></p>'
    )
