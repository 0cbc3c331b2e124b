"""The notice posted on a work item when a comment is abandoned or skipped."""

from __future__ import annotations

import re
from datetime import datetime

from domain.durations import duration
from domain.model import AGENT_MARKER, Comment
from domain.park import Park, ParkRule, Unpark
from domain.prompts import one_line
from domain.refs import WorkItemRef

_SAFE_ID = re.compile(r"^[A-Za-z0-9_=-]{1,100}$")
_SAFE_URL = re.compile(r"^https://[A-Za-z0-9.-]+(?::[0-9]+)?/[A-Za-z0-9._~/#-]*$")


_HEADER = (
    f"{AGENT_MARKER}\n"
    "> 🤖 **the-loop** (automated notice from the daemon that forwards comments to this item's agent)\n\n"
)


def blocked_notice(item: WorkItemRef) -> str:
    """The agent waits for a person in its session: said once per dialog, never with comment text."""
    return (
        f"{_HEADER}The agent is **waiting for an answer in its session** (a permission prompt or another "
        "dialog). New comments are held — not lost — until it goes on.\n\n"
        f"To answer it, attach to the session: `the-loop sessions attach --work-item {item}`.\n"
    )


def parked_notice(item: WorkItemRef, park: Park, *, ended: tuple[datetime, Unpark] | None = None) -> str:
    """The item is parked on an API failure: said once per episode, and edited when the park ends
    (`ended`: when, and by what). The cause and the rule that set the end are those `session.parked`
    names; the-loop's own words only, never the error's text or a comment's."""
    if park.until is None:
        when = (
            "until an operator acts: the API refused the agent's credentials. The operator fixes them "
            f"(`the-loop doctor` says what is wrong) and writes `the-loop resume` here, or runs it for `{item}`"
        )
    else:
        when = f"until **{park.until:%Y-%m-%d %H:%M:%S} UTC** ({_rule(park)}); `the-loop resume` here resumes it sooner"
    body = (
        f"{_HEADER}The agent's turn **failed on the API**: **{park.cause.words}** (`{park.cause.value}`), and this "
        f"item is **parked** {when}.\n\n"
        "While parked nothing is pasted and no delivery attempt is spent: new comments are held, not lost. "
        "At the reset the agent is given the comments whose turns failed again, then the held ones.\n"
    )
    if ended is not None:
        at, by = ended
        body += f"\n**Unparked** at {at:%Y-%m-%d %H:%M:%S} UTC: {by.words}.\n"
    return body


def _rule(park: Park) -> str:
    """The rule that set the park's end, as `session.parked` names it in `rule`."""
    wait = duration(park.wait_seconds, parts=1)
    if park.rule is ParkRule.NAMED_RESET:
        return "the reset the API named"
    if park.rule is ParkRule.DOUBLED:
        return f"failed again right after a resume: twice the last wait, {wait}"
    if park.rule is ParkRule.LONGEST:
        return f"cut to the longest wait, {wait}"
    return f"no reset was named: the default wait of {wait} for {park.cause.words}"


def start_failed_notice(item: WorkItemRef, *, attempts: int, reason: str) -> str:
    """The agent could not be started; `reason` is the-loop's own wording, never a comment's text."""
    return (
        f"{_HEADER}The agent for this item **could not be started**, and the-loop **will not try again** "
        "on its own.\n\n"
        f"- Attempts: {attempts}\n"
        f"- Why: {reason}\n\n"
        "To recover, comment again (a new comment starts the agent when spawning is armed), or write "
        f"`the-loop start`; the operator can look at `the-loop events --work-item {item}`.\n"
    )


def slot_wait_notice(item: WorkItemRef, *, since: datetime, memory: bool = False, home: str = "") -> str:
    """Every host runs as many agents as `cluster.maxSessions` allows (`memory`: this host's free
    memory is below `cluster.minFreeMemoryMiB`; `home`: the item's agent is hibernated and its
    conversation is on that host, which is full): said once per wait."""
    if home and not memory:
        return (
            f"{_HEADER}This item is **waiting for a free slot** on `{home}`: its agent is resting (hibernated) "
            f"and its conversation is kept on that host, which already runs as many agents as it may "
            f"(`cluster.maxSessions`), since {since:%Y-%m-%d %H:%M} UTC. Comments are kept, not lost; the agent "
            f"resumes its conversation there as soon as a slot frees. If `{home}` goes away, another host starts "
            "it afresh.\n\n"
            f"The operator can see it in `the-loop status` and `the-loop sessions list` (item: {item}).\n"
        )
    if memory:
        return (
            f"{_HEADER}This item is **waiting for a free slot**: the host is short of memory (below "
            f"`cluster.minFreeMemoryMiB`) since {since:%Y-%m-%d %H:%M} UTC, so no new agent starts. Comments are "
            "kept, not lost; its agent starts as soon as memory frees (an idle agent is hibernated to make room).\n\n"
            f"The operator can see it in `the-loop status` and `the-loop sessions list` (item: {item}).\n"
        )
    return (
        f"{_HEADER}This item is **waiting for a free slot**: every host of the-loop already runs as many "
        f"agents as it may (`cluster.maxSessions`), since {since:%Y-%m-%d %H:%M} UTC. Comments are kept, "
        "not lost; its agent starts as soon as a slot frees (another item's session closes).\n\n"
        f"The operator can see it in `the-loop status` and `the-loop sessions list`, or raise "
        f"`cluster.maxSessions` (item: {item}).\n"
    )


def unrouted_notice(item: WorkItemRef) -> str:
    """No routing rule covers the item and there is no default harness: said once per item."""
    return (
        f"{_HEADER}This item has **no agent configured**: none of the-loop's routing rules "
        "(`routing.rules`) covers it, and there is no default harness (`routing.defaultHarness`). Its "
        "comments are kept, not lost; they are delivered once it has an agent.\n\n"
        "To give it one, an authorized author writes `the-loop start <harness>` (a harness the operator "
        f"configured), or the operator adds a rule that covers {item}.\n"
    )


def harness_started_notice(item: WorkItemRef, *, harness: str, was: str = "") -> str:
    """`the-loop start <harness>` was done; `harness` and `was` are configured names, never a comment's text."""
    switched = f" instead of **{was}**, in a fresh conversation (its earlier one was ended)" if was else ""
    return (
        f"{_HEADER}This item's agent is now **{harness}**{switched}. It starts with the item's text; the "
        "comments after this one go to it.\n\n"
        f"Every later respawn or resume keeps {harness}; `the-loop start <harness>` changes it again "
        f"(item: {item}).\n"
    )


def conversation_gone_notice(item: WorkItemRef, *, host: str) -> str:
    """A hibernated item woke on another host: the one holding its conversation is gone. `host` is a
    host id of the operator's configuration, never a comment's text."""
    return (
        f"{_HEADER}This item's agent had been hibernated on host **{one_line(host)}**, which keeps its "
        "conversation and is **gone** (its heartbeat expired). Another host took the item: its agent starts "
        "in a **fresh conversation**, told to catch up from the item and its comments; the earlier transcript "
        f"stays on {one_line(host)}.\n\n"
        f"The operator can see it in `the-loop events --work-item {item}`.\n"
    )


def unknown_harness_reply(known: tuple[str, ...]) -> str:
    """`the-loop start <word>` named no harness this daemon has: the known ones, never what was written."""
    names = ", ".join(f"`{name}`" for name in known)
    return (
        f"{_HEADER}That `the-loop start` names **no harness the-loop has**; nothing was done, and it was not "
        f"passed to the agent.\n\nThe harnesses it has: {names}. Write `the-loop start` alone to start the "
        "item's own agent.\n"
    )


def no_agent_start_reply(known: tuple[str, ...], *, was: str = "") -> str:
    """`the-loop start` named no harness on an item that has no agent (no routing rule covers it and no
    default harness, or `was`, its recorded harness, is configured no more): how to name one, from the
    configured ones; never what was written."""
    names = ", ".join(f"`{name}`" for name in known)
    why = (
        f"its agent **{was}** is in the configuration no more"
        if was
        else "none of the-loop's routing rules (`routing.rules`) covers it, and there is no default harness "
        "(`routing.defaultHarness`)"
    )
    return (
        f"{_HEADER}This item has **no agent configured** for a plain `the-loop start`: {why}. Nothing was done, "
        "and it was not passed to the agent; its other comments are kept.\n\n"
        f"Name the agent to start: `the-loop start <harness>`, one of {names}.\n"
    )


def harness_gone_notice(item: WorkItemRef, *, harness: str, known: tuple[str, ...]) -> str:
    """The harness the item's agent was started with is configured no more: said once per item.
    `harness` is the name the configuration gave it, never a comment's text."""
    names = ", ".join(f"`{name}`" for name in known)
    return (
        f"{_HEADER}This item's agent **{harness}** is in the configuration no more (the operator of the-loop "
        "removed it): it is neither started nor written to. Its comments are kept, not lost; they are delivered "
        "once it has an agent.\n\n"
        f"To give it one, an authorized author writes `the-loop start <harness>`, one of {names}; or the operator "
        f"defines {harness} again (item: {item}).\n"
    )


def closed_notice(comment: Comment) -> str:
    """Said once per period an operator keeps the item's session closed, naming the comment that
    found it closed — never its text."""
    return (
        f"{_HEADER}This item's agent is **closed by the operator** of the-loop: your {_where(comment)} was "
        "**not delivered** to it, and it **will not be delivered later**. While the agent stays closed, "
        "later comments are not delivered either (each gets the failure reaction); this notice is posted "
        "once per closing.\n\n"
        "To recover, post the instruction again as a new comment once the operator has reopened it "
        f"(`the-loop sessions reopen --work-item {comment.item}`).\n"
    )


def safe_id(comment_id: str) -> str:
    """A comment id fit to print in what the-loop posts (GitHub's are digits)."""
    return comment_id if _SAFE_ID.match(comment_id) else "(unprintable id)"


def giveup_notice(comment: Comment, *, attempts: int, reason: str) -> str:
    """Built only from the-loop's own values and validated coordinates — never the comment's text."""
    return (
        f"{_HEADER}Your {_where(comment)} was **not delivered** to the agent, and it **will not be retried**.\n\n"
        f"- Attempts: {attempts}\n"
        f"- Why: {reason}\n\n"
        "To recover, post the instruction again as a new comment: a new comment gets a fresh "
        "set of delivery attempts.\n"
    )


def _where(comment: Comment) -> str:
    """The comment by its validated id and link."""
    comment_id = safe_id(comment.id)
    link = comment.url if _SAFE_URL.match(comment.url) else ""
    return f"[comment {comment_id}]({link})" if link else f"comment {comment_id}"


def budget_notice(item: WorkItemRef, *, budget: str, standing: str, reached: bool, again: str = "") -> str:
    """A budget covering the item spent 80% (`reached` False) or all of its allowance. Every value is
    the-loop's own: the budget's key from the configuration, figures, a date."""
    if not reached:
        return (
            f"{_HEADER}This item's agent has spent **80% of the budget `{budget}`**: {standing}. Once it is "
            "all spent, comments on it wait (kept, not lost) and nothing more is pasted into the agent.\n"
        )
    restart = f" It starts again {again}." if again else ""
    return (
        f"{_HEADER}The budget **`{budget}` is spent**: {standing}. Comments on this item now wait — kept, "
        f"not lost — and nothing more is pasted into its agent; a turn under way goes on.{restart}\n\n"
        f"To go on, the operator raises it: `the-loop budget raise {budget} --usd <dollars>` (or `--tokens`), "
        f"or changes `budgets` in the configuration (item: {item}).\n"
    )
