"""The fleet page in a real browser, against a running daemon with the sandbox tracker
and the demo harness. Few tests, each walking several criteria: the browser is slow to start."""

from __future__ import annotations

import json
import os
import re
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from adapters.clock import SystemClock
from adapters.eventlog.writer import JsonlEventLog
from app.web.paging import EVENTS_PER_PAGE
from domain.errors import StaleWrite
from domain.events import Event
from domain.model import CommentKind, SessionStatus
from domain.park import FailedTurn, Park, ParkCause
from domain.refs import WorkItemRef
from tests.e2e.browser import browser, screenshot
from tests.e2e.loop_rig import Loop, Poller
from tests.tmux_support import RealTmux, real_tmux, wait_for

__all__ = ["browser", "real_tmux"]
pytestmark = [pytest.mark.browser, pytest.mark.tmux]
TOKEN = "page-token-for-the-e2e-run"
PROBES = 40
CLOCK = SystemClock()


@pytest.fixture
def loop(real_tmux: RealTmux, tmp_path: Path) -> Iterator[Loop]:
    rig = Loop(tmp_path, real_tmux, harness="demo", extra={"ui": {"enabled": True, "port": 0, "token": TOKEN}})
    try:
        yield rig
    finally:
        rig.stop_all()


def _address(poller: Poller) -> str:
    found = wait_for(lambda: re.search(r"the fleet page: (http://\S+/)", poller.stderr), what="the page's address")
    return str(found.group(1))


def _status(url: str, *, headers: dict[str, str] | None = None, data: bytes | None = None) -> int:
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def _sign_in(page: Any, base: str) -> None:
    page.goto(base)
    assert page.url.endswith("/login")  # a browser without the cookie is sent to the form
    page.fill("input[name=token]", "not-the-token")
    page.press("input[name=token]", "Enter")
    assert page.get_by_role("alert").inner_text() == "wrong token"
    page.fill("input[name=token]", TOKEN)
    page.press("input[name=token]", "Enter")
    page.wait_for_selector("#items")


def _receipt_folder(loop: Loop) -> Path:
    folders = [p for p in (loop.state / "receipts").rglob("*") if p.is_dir() and any(p.glob("*.receipt"))]
    assert len(folders) == 1, folders
    return folders[0]


def _parked(loop: Loop, ref: WorkItemRef) -> None:
    """The item parked for an hour on a rate limit, as a failed turn parks it (its notice said): its
    record saved with the park, then `session.parked` in the event log — the event is what the page
    re-renders on (a comment held behind a parked or blocked agent writes none)."""
    store = loop.store()
    for _ in range(PROBES):  # the running daemon saves the record too: a save it beat is made again
        record = store.session(ref)
        assert record is not None
        park = Park(ParkCause.RATE_LIMIT, CLOCK.now(), CLOCK.now() + timedelta(hours=1), noticed=True)
        try:
            store.save_session(replace(record, park=park))
        except StaleWrite:
            continue
        JsonlEventLog(loop.log, clock=CLOCK.now).emit(
            Event.SESSION_PARKED, work_item=str(ref), cause=park.cause.value, since=park.since.isoformat()
        )
        return
    raise AssertionError("the daemon saved the record on every try")


def test_a_comment_walks_its_journey_live_a_blocked_agent_shows_blocked(loop: Loop, browser: Any) -> None:
    (ref,) = loop.items(1)
    poller = loop.running_poll()
    base = _address(poller)
    wait_for(lambda: Event.SESSION_READY in loop.event_names(), timeout=30, what="the demo harness ready")
    context = browser.new_context(viewport={"width": 1000, "height": 900})  # screenshots 1000 px wide
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    _sign_in(page, base)
    cookie = next(c for c in context.cookies() if c["name"] == "loop_ui")
    assert cookie["httpOnly"] and TOKEN not in cookie["value"]

    page.click(f"a[href*='{ref.number}'][href^='/item']")
    page.wait_for_selector("#live.ok")
    page.evaluate("window.__notReloaded = true")
    loop.comment(ref, "please say hello")
    page.wait_for_selector("li[data-comment] >> text=turn ended", timeout=30_000)
    steps = page.locator("li[data-comment] ol.journey li").all_inner_texts()
    labels = [re.sub(r"\s*\+\S+$", "", step) for step in steps]
    assert labels[0] == "seen (poll)" and labels[1] == "queued" and labels[-1] == "turn ended", labels
    assert any("pasted" in label for label in labels) and any("confirmed" in label for label in labels), labels
    assert page.evaluate("window.__notReloaded") is True  # it came live, not by a reload
    assert page.locator("pre.screen").inner_text().strip()  # the pane's last lines, as text
    screenshot(page, "item")

    # a permission dialog: the agent says it is blocked, and the page shows it without a reload
    folder = _receipt_folder(loop)
    (folder / f"{time.time_ns()}-blocked.receipt").write_text(
        json.dumps({"hook_event_name": "PermissionRequest", "session_id": "s", "tool_name": "Bash"})
    )
    page.goto(base)
    page.evaluate("window.__notReloaded = true")
    loop.comment(ref, "this one waits")  # any change re-renders the view
    page.wait_for_selector(f"tr[data-item='{ref}'] [data-state=blocked]", timeout=20_000)
    assert page.evaluate("window.__notReloaded") is True
    screenshot(page, "items")

    # its turn failed on the API: parked, in the attention tone and counted so, never a green idle
    _parked(loop, ref)
    page.wait_for_selector(f"tr[data-item='{ref}'] [data-state=parked][data-tone=attention]", timeout=20_000)
    assert page.locator("[data-count=parked]").inner_text() == "1"
    assert page.locator(f"tr[data-item='{ref}'] [data-state=idle]").count() == 0
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")  # usable at phone width
    screenshot(page, "phone")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.tagName") == "A"  # keyboard reachable
    assert errors == []


def test_the_panes_lines_are_shown_whole_with_their_characters(loop: Loop, browser: Any) -> None:
    """Claude Code draws with non-breaking spaces; CJK and emoji are a comment's own: each shown as it is."""
    (ref,) = loop.items(1)
    poller = loop.running_poll()
    base = _address(poller)
    wait_for(lambda: Event.SESSION_READY in loop.event_names(), timeout=30, what="the demo harness ready")
    page = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
    _sign_in(page, base)
    words = "café\u00a0au\u00a0lait 中文 😀"
    loop.comment(ref, "\n".join(f"{n}: {words}" for n in range(40)))  # more lines than the page shows
    finished = Event.SESSION_TURN_FINISHED.value
    # the comment's turn (the start prompt's turn ends too, with no comment)
    wait_for(
        lambda: any(e["event"] == finished and e.get("comment_id") for e in loop.events()),
        timeout=30,
        what="the turn ended",
    )

    page.goto(f"{base}item?ref={urllib.parse.quote(str(ref), safe='')}")
    screen = page.locator("pre.screen")
    shown = str(screen.text_content())
    pane = loop.tmux.run("capture-pane", "-p", "-J", "-t", f"={ref.target.name}:").rstrip("\n")

    assert f"39: {words}" in shown and "\ufffd" not in shown, shown
    assert shown.rsplit("\n", 1)[-1] == pane.rsplit("\n", 1)[-1]  # down to the pane's last line, whole
    # nothing of it hidden: no line cut off at the box's edge, none to scroll to
    assert screen.evaluate("e => e.scrollHeight <= e.clientHeight && e.scrollWidth <= e.clientWidth")


def _press(page: Any, verb: str) -> str:
    """Press the item's button as a person does: the answer must be a page, never a refusal."""
    with page.expect_navigation() as went:
        page.click(f"button[value={verb}]")
    answer = went.value
    shown = str(page.inner_text("body"))
    assert answer is not None and answer.ok, f"{verb}: {answer and answer.status} {shown!r}"
    return shown


def test_a_person_signed_in_pauses_resumes_closes_reopens_and_resets_an_item_by_its_buttons(
    loop: Loop, browser: Any
) -> None:
    (ref,) = loop.items(1)
    poller = loop.running_poll()
    base = _address(poller)
    wait_for(lambda: Event.SESSION_SPAWNED in loop.event_names(), timeout=30, what="a session")
    spawned = loop.store().session(ref)
    assert spawned is not None
    page = browser.new_context().new_page()
    _sign_in(page, base)
    page.click(f"a[href*='{ref.number}'][href^='/item']")
    page.wait_for_selector("#live.ok")

    _press(page, "pause")
    page.wait_for_selector("button[value=resume]")
    assert loop.store().ledger(ref).paused  # type: ignore[union-attr]
    _press(page, "resume")
    page.wait_for_selector("button[value=pause]")
    assert not loop.store().ledger(ref).paused  # type: ignore[union-attr]
    _press(page, "close")
    page.wait_for_selector("h2 [data-state=closed]")
    assert loop.store().session(ref).status is SessionStatus.CLOSED  # type: ignore[union-attr]
    _press(page, "reopen")
    page.wait_for_selector("button[value=close]")
    assert loop.store().session(ref).status is SessionStatus.ACTIVE  # type: ignore[union-attr]
    asked = _press(page, "reset")  # first what it would do, and a button to confirm
    assert "would reset" in asked and loop.store().session(ref) is not None
    _press(page, "reset")

    assert page.url == base and page.locator("#items").is_visible()  # the item is forgotten: the fleet
    assert Event.SESSION_RESET in loop.event_names()
    now = loop.store().session(ref)
    assert now is None or now.spawn_id != spawned.spawn_id  # forgotten (the next cycle may spawn anew)
    acted = [e for e in loop.events() if Event.named(e["event"]) in PRESSED.values()]
    assert [(Event.named(e["event"]), e["source"]) for e in acted] == [(event, "page") for event in PRESSED.values()]


PRESSED = {
    "pause": Event.DELIVERY_PAUSED,
    "resume": Event.DELIVERY_RESUMED,
    "close": Event.SESSION_CLOSED,
    "reopen": Event.SESSION_REOPENED,
    "reset": Event.SESSION_RESET,
}


def test_every_event_is_visible_in_the_browser_and_its_delay_is_measured(loop: Loop, browser: Any) -> None:
    """The daemon's own events (here: pause and resume, alternately, by a script with the token),
    from just before each is asked for to the browser's re-render that shows it."""
    (ref,) = loop.items(1)
    poller = loop.running_poll()
    base = _address(poller)
    wait_for(lambda: Event.SESSION_SPAWNED in loop.event_names(), timeout=30, what="a session")
    context = browser.new_context()
    context.add_cookies([{"name": "loop_ui", "value": _cookie(base), "url": base}])
    page = context.new_page()
    page.goto(f"{base}item?ref={urllib.parse.quote(str(ref), safe='')}")
    page.wait_for_selector("#live.ok")
    delays = []
    for n in range(PROBES):
        verb, then = ("pause", "resume") if n % 2 == 0 else ("resume", "pause")
        shown_before = page.evaluate("window.__loopShown.length")
        asked = CLOCK.now().timestamp() * 1000  # the browser's Date.now() reads the same clock
        form = f"action={verb}&ref={urllib.parse.quote(str(ref))}".encode()
        assert _status(f"{base}action", data=form, headers={"Authorization": f"Bearer {TOKEN}"}) == 200
        page.wait_for_selector(f"button[value={then}]", timeout=5_000)
        shown = page.evaluate("window.__loopShown")
        delays.append(min(at for _, at in shown[shown_before:] if at >= asked) - asked)
    delays.sort()
    p99 = delays[min(len(delays) - 1, int(len(delays) * 0.99))]
    print(f"event -> visible: median {delays[len(delays) // 2]:.0f} ms, p99 {p99:.0f} ms over {PROBES}")
    # a wall-clock bound is asserted only when asked: on a loaded CI machine it measures the machine
    if os.environ.get("THE_LOOP_UI_LATENCY"):
        assert p99 <= float(os.environ["THE_LOOP_UI_LATENCY"]), delays
    paused = [e for e in loop.events() if e["event"] in {"delivery.paused", "delivery.resumed"}]
    assert len(paused) == PROBES and {e["source"] for e in paused} == {"page"}


def _cookie(base: str) -> str:
    import hashlib
    import hmac

    return hmac.new(TOKEN.encode(), b"session", hashlib.sha256).hexdigest()


def test_items1_4_a_wrong_or_missing_token_and_an_action_without_it_are_refused(loop: Loop) -> None:
    (ref,) = loop.items(1)
    poller = loop.running_poll()
    base = _address(poller)
    wait_for(lambda: Event.SESSION_SPAWNED in loop.event_names(), timeout=30, what="a session")

    assert _status(f"{base}api/fleet") == 401
    assert _status(f"{base}api/fleet", headers={"Authorization": "Bearer wrong"}) == 401
    assert _status(f"{base}api/fleet", headers={"Authorization": f"Bearer {TOKEN}"}) == 200
    form = f"action=close&ref={urllib.parse.quote(str(ref))}".encode()
    assert _status(f"{base}action", data=form) == 401
    # a browser's cookie without the CSRF field is refused too
    assert _status(f"{base}action", data=form, headers={"Cookie": f"loop_ui={_cookie(base)}"}) == 403
    assert Event.SESSION_CLOSED not in loop.event_names()
    assert _status(f"{base}action", data=form, headers={"Authorization": f"Bearer {TOKEN}"}) == 200
    closed = [e for e in loop.events() if e["event"] == "session.closed"]
    assert [e["source"] for e in closed] == ["page"]


def test_a_port_in_use_stops_poll_in_one_line_naming_the_keys(loop: Loop) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        loop.extra = {"ui": {"enabled": True, "port": taken.getsockname()[1]}}
        poller = loop.start_poll()
        assert poller.process.wait(timeout=60) == 1
    (said,) = poller.stderr.strip().splitlines()[-1:]
    assert "the fleet page cannot bind 127.0.0.1:" in said and "(ui.host, ui.port)" in said


CLOCK_TIME = r"(\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d"
READ_TIME = re.compile(rf"({CLOCK_TIME}) \((just now|\d+ (s|min|h|d) ago|in \d+ s)\)")


def _item_address(base: str, ref: WorkItemRef) -> str:
    return f"{base}item?ref={urllib.parse.quote(str(ref), safe='')}"


def _seqs(page: Any) -> list[int]:
    return [
        int(seq) for seq in page.eval_on_selector_all("table.events tbody tr", "rows => rows.map(r => r.dataset.seq)")
    ]


def _toggle(base: str, ref: WorkItemRef, times: int) -> None:
    """Pause and resume the item by a script with the token: each press one event of the item."""
    for n in range(times):
        form = f"action={'pause' if n % 2 == 0 else 'resume'}&ref={urllib.parse.quote(str(ref))}".encode()
        assert _status(f"{base}action", data=form, headers={"Authorization": f"Bearer {TOKEN}"}) == 200


def test_a_person_reads_times_in_words_pages_the_events_and_reads_the_hosts_on_a_phone(
    loop: Loop, browser: Any
) -> None:
    first, second = loop.items(2)
    poller = loop.running_poll()
    base = _address(poller)
    wait_for(lambda: loop.event_names().count(Event.SESSION_READY) >= 2, timeout=30, what="two harnesses ready")
    _toggle(base, first, 2 * EVENTS_PER_PAGE)  # more than two pages of the item's events
    page = browser.new_context(viewport={"width": 1000, "height": 800}).new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    _sign_in(page, base)

    page.goto(_item_address(base, first))
    page.wait_for_selector("#live.ok")
    when = page.locator("table.events tbody tr time").first
    shown, exact = when.inner_text(), str(when.get_attribute("title"))
    said = READ_TIME.fullmatch(shown)
    assert said is not None, shown  # 12:03:05 (2 min ago)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", exact) and exact.endswith(said.group(1)[-8:] + " UTC")
    labels = page.locator("table.events tbody tr").first.locator("dt").all_inner_texts()
    assert "source" in labels and not any("_" in label for label in labels), labels  # names in words
    newest = _seqs(page)
    assert len(newest) == EVENTS_PER_PAGE and newest == sorted(newest, reverse=True)

    with page.expect_navigation():
        page.click("button[name=before]")  # older events, as a person presses it
    page.wait_for_selector("#live.ok")
    older = _seqs(page)
    assert len(older) == EVENTS_PER_PAGE and older == sorted(older, reverse=True) and max(older) < min(newest)
    screenshot(page, "events", part="section.events")
    shown_before = page.evaluate("window.__loopShown.length")
    _toggle(base, first, 2)  # new events re-render the view: the older page keeps its records
    wait_for(lambda: page.evaluate("window.__loopShown.length") > shown_before, what="the view re-rendered")
    assert _seqs(page) == older
    with page.expect_navigation():
        page.click("button[name=after]")
    assert min(_seqs(page)) > max(older)

    # blocked on a permission request: the agent's hook says so
    spawn = loop.store().session(first).spawn_id  # type: ignore[union-attr]
    (folder,) = [p for p in (loop.state / "receipts").rglob(spawn) if p.is_dir()]
    (folder / f"{time.time_ns()}-blocked.receipt").write_text(
        json.dumps({"hook_event_name": "PermissionRequest", "session_id": "s", "tool_name": "Bash",
                    "tool_input": {"command": "rm -rf build"}})
    )  # fmt: skip
    page.goto(_item_address(base, first))
    page.wait_for_selector("h2 [data-state=blocked]", timeout=20_000)
    screenshot(page, "blocked")

    # parked: its agent's turn failed on a rate limit, an hour to wait (the record as the daemon parks it)
    page.goto("about:blank")  # no stream open on the daemon stopped now
    assert poller.stop() == 0
    store, now = loop.store(), CLOCK.now()
    record = store.session(second)
    assert record is not None
    park = Park(ParkCause.RATE_LIMIT, now - timedelta(minutes=2), now + timedelta(hours=1),
                (FailedTurn("1", CommentKind.ISSUE_COMMENT),), wait_seconds=3600, detail="rate_limit")  # fmt: skip
    store.save_session(replace(record, park=park))
    base = _address(loop.running_poll())
    page.goto(_item_address(base, second))  # the cookie is the host's, whatever its port
    page.wait_for_selector("#live.ok")
    assert "item 1" in page.locator("h2").first.inner_text()  # its title
    assert page.locator("h2 [data-state=parked][data-tone=attention]").count() == 1  # not a green idle
    screenshot(page, "parked")

    page.goto(base)
    page.wait_for_selector("table.hosts")
    page.set_viewport_size({"width": 390, "height": 844})
    hosts = page.locator("table.hosts")
    assert hosts.evaluate("e => e.scrollWidth <= e.clientWidth"), hosts.evaluate("e => [e.scrollWidth, e.clientWidth]")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert hosts.locator("td[data-label=heartbeat] time").count() >= 1
    screenshot(page, "hosts", part="#pulse")
    assert errors == []


def _hook_takes_the_answer(folder: Path) -> None:
    """What the PermissionRequest hook does with the daemon's decision: takes it (harnesses/claude/hooks.py)."""
    decision = wait_for(lambda: next(folder.glob("*.decision"), None), timeout=30, what="the page's decision")
    decision.rename(decision.with_suffix(".taken"))


def test_a_person_presses_allow_on_an_open_request_and_sees_it_answered(loop: Loop, browser: Any) -> None:
    (ref,) = loop.items(1)
    poller = loop.running_poll()
    base = _address(poller)
    wait_for(lambda: Event.SESSION_READY in loop.event_names(), timeout=30, what="the demo harness ready")
    folder = _receipt_folder(loop)
    (folder / f"{time.time_ns()}-blocked.receipt").write_text(
        json.dumps({"hook_event_name": "PermissionRequest", "session_id": "s", "tool_name": "Bash",
                    "tool_input": {"command": "make test"}})
    )  # fmt: skip
    wait_for(lambda: Event.SESSION_ASKED in loop.event_names(), timeout=30, what="the request posted on the item")
    page = browser.new_context().new_page()
    _sign_in(page, base)
    page.click(f"a[href*='{ref.number}'][href^='/item']")
    request = page.locator("li[data-request='1']")
    assert "permission to use Bash" in request.inner_text() and "make test" in request.inner_text()

    taker = threading.Thread(target=_hook_takes_the_answer, args=(folder,))
    taker.start()
    with page.expect_navigation() as went:
        request.locator("button[value=allow]").click()
    taker.join()

    assert went.value is not None and went.value.ok, page.inner_text("body")

    assert page.locator("li[data-request]").count() == 0  # answered: no longer open
    answered = [e for e in loop.events() if e["event"] == Event.SESSION_ANSWERED.value]
    assert [(e["request"], e["answer"], e["source"]) for e in answered] == [(1, "allow", "page")]
    sandbox = loop.sandbox()
    said = [c.body for c in sandbox.comments(ref) if "**Request 1**" in c.body]
    sandbox.close()
    assert len(said) == 1 and "**Answered**: allowed once from the fleet page at " in said[0]
