"""The fleet page over fakes: its routes called directly — who may see and act, what an action
writes, the journey of a comment, one row per item, nothing raw from a pane."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qsl, quote

import pytest

from adapters.eventlog.reader import Tail
from app.usecases.cycle.daemon import HEARTBEAT, Daemon
from app.usecases.views.fleet import SCREEN_LINES, Fleet
from app.web.auth import COOKIE, Guard
from app.web.feed import Feed
from app.web.http import Request, Response, head
from app.web.page import FleetPage
from app.web.paging import EVENTS_PER_PAGE
from app.web.views import screen_block
from domain.budget import RateBudget
from domain.ledger import Ledger
from domain.model import ItemState as UpstreamState
from domain.model import SessionStatus
from domain.refs import RepoRef, WorkItemRef
from tests.service.world import REPO, World

TOKEN = "t0ken-for-the-page"


def _page(world: World, log: Path, token: str = TOKEN) -> FleetPage:
    assert world.cluster is not None
    fleet = Fleet(
        admin=world.admin(), uow=world.uow, cluster=world.cluster, tmux=world.tmux,
        heartbeat=lambda: world.store.meta().get(HEARTBEAT),
    )  # fmt: skip
    return FleetPage(fleet=fleet, feed=Feed(log, Tail), guard=Guard(token), now=world.clock.now, where="here")


def _get(page: FleetPage, path: str, **headers: str) -> Response:
    url, _, query = path.partition("?")
    answer = page(Request("GET", url, dict(parse_qsl(query)), headers))
    assert isinstance(answer, Response)
    return answer


def _post(page: FleetPage, form: dict[str, str], **headers: str) -> Response:
    body = "&".join(f"{k}={quote(v, safe='')}" for k, v in form.items()).encode()
    answer = page(Request("POST", "/action", {}, headers, body))
    assert isinstance(answer, Response)
    return answer


class _Lock:
    def acquire(self, info: dict[str, object]) -> None: ...
    def note(self, info: dict[str, object]) -> None: ...
    def release(self) -> None: ...


BEARER = {"authorization": f"Bearer {TOKEN}"}


def test_without_the_token_nothing_is_shown_and_a_browser_is_sent_to_sign_in(tmp_path: Path) -> None:
    page = _page(World(), tmp_path / "events.jsonl")

    assert _get(page, "/api/fleet").status == 401
    assert _get(page, "/api/fleet", authorization="Bearer nope").status == 401
    assert _get(page, "/", accept="text/html").headers == (("Location", "/login"),)
    assert _get(page, "/api/fleet", **BEARER).status == 200


def test_the_sign_in_form_sets_an_httponly_cookie_that_is_not_the_token(tmp_path: Path) -> None:
    page = _page(World(), tmp_path / "events.jsonl")

    wrong = page(Request("POST", "/login", {}, {}, b"token=nope"))
    right = page(Request("POST", "/login", {}, {}, f"token={TOKEN}".encode()))

    assert isinstance(wrong, Response) and b"wrong token" in wrong.body
    assert isinstance(right, Response) and right.status == 303
    cookie = dict(right.headers)["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and TOKEN not in cookie
    value = cookie.split(";")[0].split("=", 1)[1]
    assert _get(page, "/api/fleet", cookie=f"{COOKIE}={value}").status == 200


def test_an_action_needs_the_token_and_from_a_browser_the_csrf_field(tmp_path: Path) -> None:
    world = World()
    ref = world.watched(1)
    page = _page(world, tmp_path / "events.jsonl")
    cookie = f"{COOKIE}={Guard(TOKEN).cookie_value}"
    form = {"action": "close", "ref": str(ref)}

    assert _post(page, form).status == 401
    assert _post(page, form, cookie=cookie).status == 403  # no CSRF field
    assert (
        _post(page, form | {"csrf": Guard(TOKEN).csrf}, cookie=cookie, origin="http://evil.example", host="here").status
        == 403
    )
    assert world.record(ref).status is SessionStatus.ACTIVE
    assert _post(page, form | {"csrf": Guard(TOKEN).csrf}, cookie=cookie).status == 303

    assert world.record(ref).status is SessionStatus.CLOSED
    closed = [e for e in world.events.records if e["event"] == "session.closed"]
    assert [e["source"] for e in closed] == ["page"]


def test_without_a_token_configured_the_page_shows_but_never_acts(tmp_path: Path) -> None:
    world = World()
    ref = world.watched(1)
    page = _page(world, tmp_path / "events.jsonl", token="")

    assert _get(page, "/api/fleet").status == 200
    assert _post(page, {"action": "pause", "ref": str(ref)}).status == 403
    assert not world.ledger(ref).paused


@pytest.mark.parametrize("verb", ["pause", "reopen", "reset"])
def test_each_action_is_an_event_whose_source_is_the_page(tmp_path: Path, verb: str) -> None:
    world = World()
    ref = world.watched(1)
    page = _page(world, tmp_path / "events.jsonl")
    if verb == "reopen":
        _post(page, {"action": "close", "ref": str(ref)}, **BEARER)
    before = len(world.events.records)

    preview = _post(page, {"action": verb, "ref": str(ref)}, **BEARER)
    if verb == "reset":  # first the CLI's dry run, then only when confirmed
        assert "would reset" in preview.body.decode()
        assert world.store.session(ref) is not None
        _post(page, {"action": verb, "ref": str(ref), "confirm": "yes"}, **BEARER)

    written = world.events.records[before:]
    wanted = {"pause": "delivery.paused", "reopen": "session.reopened", "reset": "session.reset"}[verb]
    assert [e.get("source") for e in written if e["event"] == wanted] == ["page"]


def test_one_row_per_item_the_store_knows_with_or_without_a_session(tmp_path: Path) -> None:
    world = World()
    world.watched(1)
    bare = WorkItemRef(REPO, 2)
    world.store.save_ledger(Ledger(item=bare, baseline_at=world.clock.now()))

    rows = json.loads(_get(_page(world, tmp_path / "events.jsonl"), "/api/fleet", **BEARER).body)["items"]

    assert sorted((r["work_item"], r["state"]) for r in rows) == [
        (str(WorkItemRef(REPO, 1)), "busy"),
        (str(bare), "none"),
    ]


def test_a_comments_journey_is_read_from_its_events_with_the_times_between(tmp_path: Path) -> None:
    world = World()
    ref = world.watched(1)
    log = tmp_path / "events.jsonl"
    steps = [("dispatch.queued", 0), ("dispatch.pasted", 1), ("dispatch.confirmed", 3), ("session.turn_finished", 10)]
    log.write_text("".join(
        json.dumps({"ts": f"2026-01-01T00:00:{s:02d}+00:00", "event": e, "work_item": str(ref), "comment_id": "7",
                    "attempt": 1, "confirmed_by": "receipt"}) + "\n" for e, s in steps
    ))  # fmt: skip

    html = _get(_page(world, log), f"/item?ref={quote(str(ref), safe='')}", **BEARER).body.decode()

    journey = html.split('data-comment="7"')[1].split("</ol>")[0]
    assert [part.split("<")[0].strip() for part in journey.split('<li class="')[1:]] == [
        'ok">seen (poll)',
        'ok">queued',
        'busy">attempt 1: pasted',
        'ok">confirmed (receipt)',
        'ok">turn ended',
    ]
    assert "+1s" in journey and "+2s" in journey and "+7s" in journey


def test_the_panes_lines_are_shown_escaped_with_terminal_escapes_removed(tmp_path: Path) -> None:
    world = World()
    ref = world.watched(1)
    world.session(ref).panes[0].screen = "\x1b[31m<script>alert(1)</script>\x1b]0;title\x07 done\x07"

    html = _get(
        _page(world, tmp_path / "events.jsonl"), f"/item?ref={quote(str(ref), safe='')}", **BEARER
    ).body.decode()

    pane = html.split('<pre class="screen">')[1].split("</pre>")[0]
    assert pane == "&lt;script&gt;alert(1)&lt;/script&gt; done"


def test_an_items_title_comes_from_its_repositorys_last_listing_escaped(tmp_path: Path) -> None:
    world = World()
    ref = WorkItemRef(REPO, 3)
    world.tracker.add_item(ref, title="<b>Fix</b> the widget", author="alice", labels=("loop",), body="x")
    world.cycle()
    page = _page(world, tmp_path / "events.jsonl")
    requests = world.tracker.requests

    rows = json.loads(_get(page, "/api/fleet", **BEARER).body)["items"]
    html = _get(page, "/", **BEARER).body.decode()

    assert [(r["work_item"], r["title"]) for r in rows] == [(str(ref), "<b>Fix</b> the widget")]
    assert "&lt;b&gt;Fix&lt;/b&gt; the widget" in html and "<b>Fix</b>" not in html
    assert world.tracker.requests == requests  # the page asked GitHub nothing


def test_an_item_without_a_session_still_has_its_page(tmp_path: Path) -> None:
    world = World()
    bare = WorkItemRef(REPO, 2)
    world.store.save_ledger(Ledger(item=bare, baseline_at=world.clock.now()))
    page = _page(world, tmp_path / "events.jsonl")

    shown = _get(page, f"/item?ref={quote(str(bare), safe='')}", **BEARER)
    unknown = _get(page, f"/item?ref={quote(str(WorkItemRef(REPO, 9)), safe='')}", **BEARER)

    assert shown.status == 200 and 'data-state="none"' in shown.body.decode()
    assert unknown.status == 404


def test_the_daemon_panel_says_the_github_budget_left_and_its_reset(tmp_path: Path) -> None:
    world = World()
    world.item()
    page = _page(world, tmp_path / "events.jsonl")
    before = _get(page, "/", **BEARER).body.decode()
    reset = datetime(2026, 12, 1, 16, 42, 30, tzinfo=UTC).timestamp()
    world.tracker.budget_seen = RateBudget(remaining=4873, limit=5000, reset_epoch=reset)
    daemon = Daemon(
        cycle=world.poll, uow=world.uow, lock=_Lock(),
        interval_seconds=60, version="t",
    )  # fmt: skip
    daemon.run(once=True)  # the cycle's heartbeat carries what the tracker's replies said

    after = _get(page, "/", **BEARER).body.decode()

    assert '<dt>GitHub budget</dt><dd data-fact="GitHub budget">not known yet</dd>' in before
    assert '<dd data-fact="GitHub budget">4,873 of 5,000 left, resets 16:42 UTC</dd>' in after


def test_the_daemon_panel_says_each_app_installation_s_budget_on_a_line_of_its_own(tmp_path: Path) -> None:
    globex = RepoRef.parse("globex/gadgets")
    world = World(repos=(REPO, globex))
    world.item()
    world.item(1, repo=globex)
    page = _page(world, tmp_path / "events.jsonl")
    reset = datetime(2026, 12, 1, 16, 42, 30, tzinfo=UTC).timestamp()
    world.tracker.budgets_seen = {
        REPO: RateBudget(remaining=40, limit=5000, reset_epoch=reset, installation=7),
        globex: RateBudget(remaining=4200, limit=5000, reset_epoch=reset, installation=9),
    }
    Daemon(cycle=world.poll, uow=world.uow, lock=_Lock(), interval_seconds=60, version="t").run(once=True)

    html = _get(page, "/", **BEARER).body.decode()

    assert (
        '<dd data-fact="GitHub budget">installation 7 (acme): 40 of 5,000 left, resets 16:42 UTC<br>'
        "installation 9 (globex): 4,200 of 5,000 left, resets 16:42 UTC</dd>"
    ) in html


def test_a_cycles_tick_reads_the_hosts_and_the_daemon_once(tmp_path: Path) -> None:
    world = World()
    world.item()
    page = _page(world, tmp_path / "events.jsonl")
    asked: list[str] = []
    hosts, heartbeat = page._fleet.hosts, page._fleet.heartbeat
    page._fleet.hosts = lambda: asked.append("hosts") or hosts()  # type: ignore[method-assign]
    page._fleet.heartbeat = lambda: asked.append("heartbeat") or heartbeat()  # type: ignore[method-assign]
    recent = page._feed.recent
    page._feed.recent = lambda **kw: asked.append("every record held") or recent(**kw)  # type: ignore[method-assign]

    pulse = _get(page, "/", **BEARER, **{"x-fragment": "pulse"})

    assert pulse.status == 200 and 'id="daemon"' in pulse.body.decode()
    # not once for the fragment and once more for the page; the log's counts kept as it is read,
    # not a pass over the thousands of records held
    assert sorted(asked) == ["heartbeat", "hosts"]


def test_the_daemon_panel_counts_what_the_log_said_as_it_is_read_on(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    world = World()
    page = _page(world, log)
    lines = [
        {"event": "poll.cycle", "level": "info", "items": 3},
        {"event": "webhook.received", "level": "info"},
        {"event": "poll.source_failed", "level": "error"},
        {"event": "poll.backoff", "level": "warning", "repo": "o/r", "until": 7},
        {"event": "poll.cycle", "level": "info", "items": 4},
    ]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines[:3]))
    first = _get(page, "/", **BEARER, **{"x-fragment": "pulse"}).body.decode()
    with log.open("a") as more:
        more.write("".join(json.dumps(line) + "\n" for line in lines[3:]))
    then = _get(page, "/", **BEARER, **{"x-fragment": "pulse"}).body.decode()

    assert '"cycles seen">1<' in first and '"errors">1<' in first and '"webhook deliveries">1<' in first
    assert '"cycles seen">2<' in then and '"last cycle: items">4<' in then and '"GitHub backoff">o/r until 7<' in then


def test_the_page_asks_browsers_to_send_its_own_origin_on_its_forms() -> None:
    # `no-referrer` makes Chromium send `Origin: null` on a form POST, which the guard refuses
    said = dict(line.split(": ", 1) for line in head(Response(200)).decode("latin-1").split("\r\n")[1:] if line)

    assert said["Referrer-Policy"] == "same-origin"


def test_a_button_pressed_on_the_page_is_done_and_origin_null_or_another_is_refused(tmp_path: Path) -> None:
    world = World()
    ref = world.watched(1)
    page = _page(world, tmp_path / "events.jsonl")
    browser = {"cookie": f"{COOKIE}={Guard(TOKEN).cookie_value}", "host": "127.0.0.1:8788"}
    form = {"action": "pause", "ref": str(ref), "csrf": Guard(TOKEN).csrf}

    assert _post(page, form, **browser, origin="null").status == 403
    assert _post(page, form, **browser, origin="http://127.0.0.1:9999").status == 403
    assert not world.ledger(ref).paused
    assert _post(page, form, **browser, origin="http://127.0.0.1:8788").status == 303
    assert world.ledger(ref).paused


def test_a_refused_press_says_what_to_do(tmp_path: Path) -> None:
    world = World()
    ref = world.watched(1)
    page = _page(world, tmp_path / "events.jsonl")
    browser = {"cookie": f"{COOKIE}={Guard(TOKEN).cookie_value}", "host": "here:1", "accept": "text/html"}
    form = {"action": "close", "ref": str(ref)}

    stale = _post(page, form | {"csrf": "from-an-old-page"}, **browser)
    elsewhere = _post(page, form | {"csrf": Guard(TOKEN).csrf}, **browser, origin="null")
    signed_out = _post(page, form, accept="text/html")
    script = _post(page, form, authorization="Bearer wrong")

    assert (stale.status, elsewhere.status, signed_out.status, script.status) == (403, 403, 401, 401)
    assert stale.content_type.startswith("text/html") and "reload" in stale.body.decode()
    assert f'href="/item?ref={quote(str(ref), safe="")}"' in stale.body.decode()  # back to the item
    assert "own address" in elsewhere.body.decode()
    assert 'href="/login"' in signed_out.body.decode()
    assert script.content_type.startswith("text/plain")  # a script reads one plain line
    assert world.record(ref).status is SessionStatus.ACTIVE


def _pane(page: FleetPage, ref: WorkItemRef) -> str:
    html = _get(page, f"/item?ref={quote(str(ref), safe='')}", **BEARER).body.decode()
    return html.split('<pre class="screen">')[1].split("</pre>")[0]


def test_the_panes_characters_are_kept_and_only_controls_and_bidi_controls_dropped(tmp_path: Path) -> None:
    world = World()
    ref = world.watched(1)
    world.session(ref).panes[0].screen = "❯\u00a0hello 中文 😀\r\n\u202eevil\u202c ok\x07\n"

    assert _pane(_page(world, tmp_path / "events.jsonl"), ref) == "❯\u00a0hello 中文 😀\nevil ok"


def test_the_pane_is_shown_by_its_last_whole_lines_without_the_blank_rows_below() -> None:
    lines = [f"line {n} " + "\u00a0" * 40 + "│" for n in range(100)]
    captured = "\n".join(lines) + "\n" * 40  # what tmux gives of a pane whose lower rows are empty

    shown = screen_block(captured).split('<pre class="screen">')[1].split("</pre>")[0]

    assert shown.split("\n") == lines[-SCREEN_LINES:]


def test_an_item_closed_on_github_keeps_its_title_on_the_page(tmp_path: Path) -> None:
    world = World()
    ref = WorkItemRef(REPO, 4)
    world.tracker.add_item(ref, title="Fix the widget", author="alice", labels=("loop",), body="x")
    world.cycle()
    world.tracker.set_state(ref, UpstreamState.CLOSED)  # it leaves the listing the titles come from
    world.cycle()
    page = _page(world, tmp_path / "events.jsonl")

    fleet = _get(page, "/", **BEARER).body.decode()
    item = _get(page, f"/item?ref={quote(str(ref), safe='')}", **BEARER).body.decode()

    assert world.record(ref).status is SessionStatus.CLOSED
    row = fleet.split(f'<tr data-item="{ref}">')[1].split("</tr>")[0]
    assert "Fix the widget" in row and 'data-state="closed"' in row
    assert "Fix the widget" in item.split("<h2>")[1].split("</h2>")[0]


def test_the_items_events_are_shown_a_page_at_a_time_newest_first_with_a_button_to_older_ones(
    tmp_path: Path,
) -> None:
    world = World()
    ref = world.watched(1)
    log = tmp_path / "events.jsonl"
    log.write_text("".join(
        json.dumps({"ts": f"2026-01-01T00:{n:02d}:00+00:00", "event": "delivery.paused", "work_item": str(ref),
                    "n": n}) + "\n" for n in range(EVENTS_PER_PAGE + 5)
    ))  # fmt: skip
    page = _page(world, log)
    url = f"/item?ref={quote(str(ref), safe='')}"

    first = _get(page, url, **BEARER).body.decode()
    older = first.split('name="before" value="')[1].split('"')[0]
    second = _get(page, f"{url}&before={older}", **BEARER).body.decode()

    def shown(html: str) -> list[str]:
        return [cell.split("</dd>")[0] for cell in html.split("<dt>n</dt><dd>")[1:]]

    assert shown(first) == [str(n) for n in range(EVENTS_PER_PAGE + 4, 4, -1)]
    assert shown(second) == ["4", "3", "2", "1", "0"]
    assert 'name="after"' in second and 'name="before"' not in second  # newer from here; nothing older


def test_each_item_shows_the_agent_its_session_runs_on_the_page_and_in_its_json(tmp_path: Path) -> None:
    world = World()
    world.watched(1)
    bare = WorkItemRef(REPO, 2)
    world.store.save_ledger(Ledger(item=bare, baseline_at=world.clock.now()))
    page = _page(world, tmp_path / "events.jsonl")

    rows = json.loads(_get(page, "/api/fleet", **BEARER).body)["items"]
    html = _get(page, "/", **BEARER).body.decode()
    one = _get(page, f"/item?ref={quote(str(WorkItemRef(REPO, 1)), safe='')}", **BEARER).body.decode()

    assert sorted((r["work_item"], r["harness"]) for r in rows) == [
        (str(WorkItemRef(REPO, 1)), "claude"),
        (str(bare), None),
    ]
    assert "<th>agent</th>" in html and "<td>claude</td>" in html
    assert "agent claude" in one
