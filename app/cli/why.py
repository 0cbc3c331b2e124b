"""`why`: what became of one comment, and why — from the ledger and the event log."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from app.cli.context import CliContext, Commands, UsageProblem, command
from app.cli.events_view import COLUMNS, as_row, line
from domain.errors import InvalidRef, LoopError

if TYPE_CHECKING:
    from app.usecases.views.why import Story
    from domain.ports import StateStore

__all__ = ["add_why"]


class UnknownComment(LoopError):
    """Neither the ledger nor the event log knows the comment (exit status 1)."""


def add_why(commands: Commands) -> None:
    parser = command(
        commands,
        "why",
        run_why,
        """
        what became of one comment, and why (delivered, waiting, skipped, ...)

        The whole story of one comment, from its item's ledger and the event log: seen by poll
        or webhook, queued, each attempt, pasted, confirmed, its reactions — or why it is not a prompt
        (an author routing.authorizedUsers or routing.authorize does not authorize, history, the agent
        marker, ...). A waiting comment names what holds it: its item parked until a time (and why), the
        agent waiting on a request, paused (by which comment), stopped, closed, or no free slot; a
        delivered one whose turn then
        failed on the API says so; then its item's state, when the store says something holds it
        (`its item: parked: …`, as `status` and the page say it). The comment's text is never shown.

        exit status: 0 told, 1 neither the ledger nor the event log knows the comment, 2 usage error.
        """,
    )
    parser.add_argument(
        "comment", metavar="COMMENT", help="its id, or its URL (…/issues/N#issuecomment-ID, …/pull/N#discussion_rID)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object (with `config` and `state_root`)")


def _budget_holding(story: Story, context: CliContext, store: StateStore | None) -> str:
    """A comment that waits, on an item a spent budget holds: which budget, as the daemon judges it
    (the item's labels as its last turn's cost row kept them)."""
    budgets = context.settings.budget_list
    if store is None or not budgets or story.pending is None or story.item is None:
        return ""
    from app.usecases.delivery.spending import Spending

    container = context.container
    spending = Spending(
        store, context.settings.pricing.table(), budgets, container.clock(), container.events(), _unsaid
    )
    costs = store.costs(item=story.item)
    labels = costs[-1].labels if costs else frozenset()
    author = story.pending.comment.author or ""
    spent = [s for s in spending.standings(story.item, labels, author) if s.reached]
    if not spent:
        return ""
    budget, subject = spent[0].subject.budget.key, "".join(c for c in spent[0].subject.name if c.isprintable())
    return f"held by the budget `{budget}`: spent ({subject}); see `the-loop budget list`"


def _unsaid(*_: object, **__: object) -> None:
    return None  # `why` only reads: it tells no item anything


def run_why(args: argparse.Namespace, context: CliContext) -> int:
    from app.container import read_events  # the reader lives with the adapters
    from app.usecases.views.why import comment_story
    from domain.story import CommentQuery

    try:
        query = CommentQuery.parse(args.comment)
        watched = [source.repo for source in context.settings.sources()]
        host = context.settings.integrations.github.host
        item = query.item.resolve(watched, host=host) if query.item else None
    except InvalidRef as error:
        raise UsageProblem(f"why: {error}") from None
    container = context.container
    store = container.store() if container.store_present() else None
    story = comment_story(store, query.comment_id, item=item, records=read_events(context.settings.event_log_path))
    if story is None:
        raise UnknownComment(
            f"why: comment {query.comment_id} is not in the ledger nor in {context.settings.event_log_path}"
        )
    if args.json:
        print(json.dumps(story.as_json() | context.where_json(), ensure_ascii=True))
        return 0
    print(f"comment {story.comment_id} on {story.item or 'an unknown item'}")
    print(story.verdict)
    spent = _budget_holding(story, context, store)
    if spent:
        print(spent)
    if story.cost_line is not None:
        print(story.cost_line)
    if story.item_state is not None:
        print(f"its item: {story.item_state.line(container.clock().now())}")
    if story.events:
        print("", line(COLUMNS), *(line(as_row(record)) for record in story.events), sep="\n")
    else:
        said = "; the line above is from its ledger and session record" if story.resolved or story.pending else ""
        print(f"no event names it (the log may have been rotated){said}", file=sys.stderr)
    return 0
