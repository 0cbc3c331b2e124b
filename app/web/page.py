"""The fleet page's routes: who may see it, what each address shows, and the guarded actions."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime
from html import escape
from http import HTTPStatus
from importlib.resources import files
from typing import Any

from app.usecases.views.costs import money, total, turns
from app.usecases.views.fleet import Fleet
from app.usecases.views.poller_status import Heartbeat, is_overdue
from app.usecases.views.rate_budgets import Budgets
from app.usecases.views.sessions_admin import UnknownWorkItem
from app.web import views
from app.web.auth import COOKIE, Caller, Guard, Refusal
from app.web.costs import costs_panel
from app.web.feed import Feed
from app.web.http import Request, Response, Stream
from app.web.journey import journeys
from app.web.paging import events_page
from app.web.words import time_tag
from domain.asks import Answer, AnswerVerb
from domain.errors import InvalidRef
from domain.events import Event, Level
from domain.fleet import ItemState
from domain.policy import Decision
from domain.refs import WorkItemRef

_STATIC = {"page.js": "text/javascript; charset=utf-8", "page.css": "text/css; charset=utf-8"}
_ANSWERS = tuple(verb.value for verb in AnswerVerb)  # an open request's buttons: allow, allow always, deny, answer
_ACTIONS = ("pause", "resume", "close", "reopen", "reset", *_ANSWERS)


def _text(status: int, text: str) -> Response:
    return Response(status, text.encode(), "text/plain; charset=utf-8")


class FleetPage:
    def __init__(self, *, fleet: Fleet, feed: Feed, guard: Guard, now: Callable[[], datetime], where: str) -> None:
        self._fleet, self._feed, self._guard, self._now, self._where = fleet, feed, guard, now, where

    def __call__(self, request: Request) -> Response | Stream:
        if request.path.startswith("/static/"):
            return self._static(request.path.removeprefix("/static/"))
        if request.path == "/login":
            return self._login(request)
        caller = self._guard.caller(request)
        if caller is Caller.REFUSED:
            if _browser(request) and request.method == "GET":
                return Response(HTTPStatus.SEE_OTHER, headers=(("Location", "/login"),))
            if _browser(request):  # a button pressed after the cookie went: say so, and where to sign in
                return self._refused(HTTPStatus.UNAUTHORIZED, Refusal.NOT_SIGNED_IN, "/login", "sign in")
            return Response(
                HTTPStatus.UNAUTHORIZED, b"a token is needed", "text/plain; charset=utf-8",
                (("WWW-Authenticate", 'Bearer realm="the-loop"'),),
            )  # fmt: skip
        routes: dict[tuple[str, str], Callable[[Request], Response | Stream]] = {
            ("GET", "/"): self._home,
            ("GET", "/item"): self._item,
            ("GET", "/events"): lambda _: Stream(self._feed.stream),
            ("GET", "/api/fleet"): self._json,
            ("POST", "/action"): self._action,
        }  # fmt: skip
        route = routes.get((request.method, request.path))
        return route(request) if route else _text(HTTPStatus.NOT_FOUND, "no such page")

    def _json(self, _: Request) -> Response:
        return Response(200, json.dumps(self._fleet.as_json(self._now())).encode(), "application/json")

    def _static(self, name: str) -> Response:
        if name not in _STATIC:
            return _text(HTTPStatus.NOT_FOUND, "no such file")
        return Response(200, files("app.web").joinpath("static", name).read_bytes(), _STATIC[name])

    def _html(self, request: Request, title: str, body: str, controls: str = "", *, live: bool = True) -> Response:
        if request.headers.get("x-fragment") == "1":
            return Response(200, body.encode())
        shown = views.page(title=title, body=body, where=self._where, controls=controls, live=live)
        return Response(200, shown.encode())

    def _login(self, request: Request) -> Response:
        if not self._guard.guarded:
            return Response(HTTPStatus.SEE_OTHER, headers=(("Location", "/"),))
        if request.method == "POST":
            if self._guard.token_ok(request.form().get("token", "")):
                cookie = f"{COOKIE}={self._guard.cookie_value}; HttpOnly; SameSite=Strict; Path=/"
                return Response(HTTPStatus.SEE_OTHER, headers=(("Location", "/"), ("Set-Cookie", cookie)))
            # shown again, 200: a refused sign-in is not a fault of the page (no console error)
            return self._html(request, "sign in", views.login_form("wrong token"), live=False)
        return self._html(request, "sign in", views.login_form(), live=False)

    def _home(self, request: Request) -> Response:
        state, sort = request.query.get("state", ""), request.query.get("sort", "item")
        if request.headers.get("x-fragment") == "pulse":  # a cycle's tick: no tmux probe, one store read
            return Response(200, self._pulse().encode())
        pulse = f'<section id="pulse">{self._pulse()}</section>'
        now = self._now()
        costs = self._fleet.costs(now)
        items = views.items_table(self._fleet.rows(), now=now, state=state, sort=sort, costs=costs.items)
        body = f"{pulse}{costs_panel(costs)}<section>{items}</section>"
        return self._html(request, "fleet", body, views.filter_form(state, sort))

    def _pulse(self) -> str:
        """The hosts and the daemon: what changes with every cycle, read without asking tmux."""
        now = self._now()
        hosts = views.hosts_table(self._fleet.hosts(), self._fleet.lease_seconds(), now=now)
        return hosts + views.daemon_panel(self._daemon(now))

    def _item(self, request: Request) -> Response:
        try:
            item = WorkItemRef.parse(request.query.get("ref", ""))
            detail = self._fleet.detail(item)
        except (InvalidRef, UnknownWorkItem) as error:
            return _text(HTTPStatus.NOT_FOUND, str(error))
        numbered = self._feed.recent(work_item=str(item))
        records = [record for _, record in numbered]
        row, now = detail.row, self._now()
        spent = self._fleet.turn_costs(item)
        shown = events_page(numbered, before=_number(request, "before"), after=_number(request, "after"))
        body = (
            f"<h2>{escape(str(item))} {escape(views.sanitized(row.title))} {views.tag(row.state)}</h2>"
            f"<p>host {escape(row.host)} · agent {escape(row.harness) or 'none yet'} · "
            + (f"memory {row.memory} at its last turn's end · " if row.memory else "")
            + f"last receipt {views.receipt_said(row, now, none='none yet')} · "
            f"{row.pending} pending · "
            + (f"{turns(len(spent))} cost {escape(money(total(spent)))} · " if spent else "")
            + f'<a href="{escape(views.item_url(item))}" rel="noreferrer">on GitHub</a></p>'
            + views.state_block(row.shows, detail.held, now)
            + views.actions(item, csrf=self._guard.csrf, paused=row.paused, closed=row.state is ItemState.CLOSED)
            + views.requests_block(item, self._fleet.requests(item), csrf=self._guard.csrf)
            + views.journeys_list(journeys(records), now, item, {cost.comment_id: cost for cost in spent})
            + views.screen_block(detail.screen)
            + views.events_list(shown.shown, now=now, pager=views.events_pager(item, shown))
        )
        return self._html(request, str(item), body)

    def _action(self, request: Request) -> Response:
        form = request.form()
        verb = form.get("action", "")
        refusal = self._guard.may_act(request, form)
        if refusal is not None and _browser(request):
            return self._refused(HTTPStatus.FORBIDDEN, refusal, *_back(form.get("ref", "")))
        if refusal is not None or verb not in _ACTIONS:
            why = (
                f"{refusal.said} ({refusal.remedy})"
                if refusal
                else f"unknown action {verb!r} (known: {', '.join(_ACTIONS)})"
            )
            return _text(HTTPStatus.FORBIDDEN, f"refused: {why}")
        try:
            item = WorkItemRef.parse(form.get("ref", ""))
            said = (
                self._answered(request, item, self._answer(verb, item, form))
                if verb in _ANSWERS
                else self._act(verb, item, confirmed=form.get("confirm") == "yes")
            )
        except (InvalidRef, UnknownWorkItem) as error:
            return _text(HTTPStatus.NOT_FOUND, str(error))
        script = request.headers.get("authorization") is not None
        if isinstance(said, Response):  # an answer's says what it did to script and browser alike
            return _text(200, said.body.decode()) if script and verb not in _ANSWERS else said
        if script:
            return _text(HTTPStatus.OK, said)
        # a reset forgets the item (its page is gone until a cycle sees it again): back to the fleet
        back = "/" if verb == "reset" else views.item_link(item)
        return Response(HTTPStatus.SEE_OTHER, headers=(("Location", back),))

    def _refused(self, status: int, refusal: Refusal, back: str, label: str) -> Response:
        shown = views.page(title="not done", body=views.refusal(refusal.said, refusal.remedy, back, label),
                           where=self._where, live=False)  # fmt: skip
        return Response(status, shown.encode())

    def _answer(self, verb: str, item: WorkItemRef, form: Mapping[str, str]) -> Decision[bool]:
        """An open request answered from its buttons: the request by its number, a deny's reason, a
        question's option."""
        number = form.get("request", "")
        if not (number.isascii() and number.isdigit()) or len(number) > 9:
            return Decision(False, "which request? (its number, as the item's page shows it)")
        text = form.get("reason", "") if verb == AnswerVerb.DENY.value else form.get("option", "")
        return self._fleet.answer(item, Answer(AnswerVerb(verb), text, int(number)))

    def _answered(self, request: Request, item: WorkItemRef, done: Decision[bool]) -> Response:
        """What was done, or why not: one plain line to a script; a browser goes back to the item,
        or is shown why nothing was answered."""
        if request.headers.get("authorization") is not None:
            said = f"{item}: {done.reason}" if done.choice else f"{item}: not answered: {done.reason}"
            return _text(HTTPStatus.OK if done.choice else HTTPStatus.CONFLICT, said)
        if done.choice:
            return Response(HTTPStatus.SEE_OTHER, headers=(("Location", views.item_link(item)),))
        remedy = "look at the item's page again: the request may have been answered or its wait ended"
        shown = views.refusal(f"not answered: {done.reason}", remedy, views.item_link(item), f"back to {item}")
        return Response(
            HTTPStatus.CONFLICT, views.page(title="not done", body=shown, where=self._where, live=False).encode()
        )

    def _act(self, verb: str, item: WorkItemRef, *, confirmed: bool) -> str | Response:
        fleet = self._fleet
        if verb in {"pause", "resume"}:
            return f"{verb}d {item}" if fleet.pause(item, paused=verb == "pause") else f"{item}: nothing to do"
        if verb == "close":
            return f"closed {item}" if fleet.close(item) else f"{item} was closed already"
        if verb == "reopen":
            return f"reopened {item}" if fleet.reopen(item) else f"{item} is not closed"
        if not confirmed:  # the CLI's --dry-run: say what would be done, and ask
            preview = fleet.reset_preview(item).describe(done=False)
            body = (
                f'<h2>Reset?</h2><p>would reset {escape(preview)}</p><form method="post" action="/action">'
                f'<input type="hidden" name="csrf" value="{escape(self._guard.csrf)}">'
                f'<input type="hidden" name="ref" value="{escape(str(item))}">'
                '<input type="hidden" name="confirm" value="yes">'
                '<button name="action" value="reset">reset</button></form>'
                f' <a href="{views.item_link(item)}">cancel</a>'
            )  # fmt: skip
            return Response(200, views.page(title="reset?", body=body, where=self._where, live=False).encode())
        return f"reset {fleet.reset(item).describe(done=True)}"

    def _daemon(self, now: datetime) -> Mapping[str, Any]:
        beat = Heartbeat.parse(self._fleet.heartbeat())
        tally = self._feed.tally()
        last, backoff = tally.last.get(Event.POLL_CYCLE, {}), tally.last.get(Event.POLL_BACKOFF)
        facts: dict[str, Any] = {
            "last cycle": views.Html(time_tag(beat.cycle_finished, now=now)) if beat else "none yet",
            "cycle took": f"{(beat.cycle_finished - beat.cycle_started).total_seconds():.2f}s" if beat else "–",
            "overdue": "yes" if beat and is_overdue((now - beat.cycle_finished).total_seconds(), beat.interval_seconds)
            else "no",
            "cycles seen": tally.counts[Event.POLL_CYCLE],
            "webhook deliveries": tally.counts[Event.WEBHOOK_RECEIVED],
            "errors": tally.levels[Level.ERROR.value],
            "GitHub budget": _budget(beat.rate_budgets) if beat else "not known yet",
            "GitHub backoff": f"{backoff.get('repo', '?')} until {backoff.get('until', '?')}" if backoff else "none",
        }  # fmt: skip
        if skipped := self._feed.skipped_lines():
            facts["broken log lines skipped"] = skipped
        facts |= {f"last cycle: {k}": v for k, v in last.items() if k not in {"ts", "event", "level", "source"}}
        return facts


def _number(request: Request, name: str) -> int | None:
    """A whole number the query names; None when it names none (or something else)."""
    text = request.query.get(name, "")
    return int(text) if text.isascii() and text.isdigit() and len(text) < 19 else None


def _browser(request: Request) -> bool:
    return "text/html" in request.headers.get("accept", "")


def _back(ref: str) -> tuple[str, str]:
    """Where a refused press leads back to: its item's page, or the fleet."""
    try:
        item = WorkItemRef.parse(ref)
    except InvalidRef:
        return "/", "the fleet"
    return views.item_link(item), f"back to {item}"


def _budget(budgets: Budgets) -> str | views.Html:
    """What the cycle's last replies said of each budget, one line each (`status` says the same):
    `4,873 of 5,000 left, resets 16:42 UTC`, or `installation 7 (acme): …` in App mode."""
    lines = budgets.lines()
    if len(lines) <= 1:
        return lines[0] if lines else "not known yet"
    return views.Html("<br>".join(escape(line) for line in lines))
