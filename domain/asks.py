"""What the agent asks a person — a permission to use a tool, or a question — put on the
work item, and the answer an authorized comment gives back.

Claude Code's PermissionRequest hook (pinned in tests/claude/test_claude_permission_facts.py) fires
for every tool that asks, AskUserQuestion included, and takes a decision as its output: allow
(with `updatedPermissions` for a rule of the session, or `updatedInput.answers` answering a
question) or deny with a message the model reads. The tool and its input are the agent's text:
shown only fenced and sanitized, and the answer is built by the-loop from a number or an option's
own label — never from the comment's text, but for a deny's reason, which goes to the agent only.

A harness whose hook refuses an allow carrying a rule for the session (`session_rules` false on its
`HarnessSpec`) is never offered `allow always`, and such an answer to it is refused, not given.

Each request is numbered on its item and an answer binds to the request its author saw (`bind`):
the one its number names, or, without a number, the only one open — posted, either way, before the
answer was written. One message may ask for several tools at once, each its own request.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from domain.control import Control, Verb
from domain.durations import duration
from domain.model import AGENT_MARKER, PostedRequest
from domain.policy import Decision
from domain.prompts import cap, sanitize, untrusted_block
from domain.receipts import (
    EPISODE_ENDS,
    QUESTION_TOOL,
    HarnessState,
    Receipt,
    ReceiptKind,
    harness_state,
    open_dialog,
    open_requests,
    parsed_input,
)
from domain.redaction import published_input, redact
from domain.refs import WorkItemRef

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.:-]{1,100}$")
INPUT_LIMIT = 6000  # bytes of a tool's input shown on the item
REASON_LIMIT = 2000  # bytes of a deny's reason handed to the agent


class AnswerState(enum.Enum):
    """Where the answer to one request stands, as the hook's files say."""

    NONE = "none"  # no answer given; the hook may still wait
    GIVEN = "given"  # the daemon wrote its decision; the hook has not taken it yet
    TAKEN = "taken"  # the hook took the decision and handed it to the harness
    EXPIRED = "expired"  # the hook stopped waiting: the dialog is the pane's


class AskKind(enum.Enum):
    PERMISSION = "permission"  # may the agent use this tool?
    QUESTION = "question"  # which of these options?


@dataclass(frozen=True, slots=True)
class Question:
    text: str  # the agent's own words: never trusted
    options: tuple[str, ...]  # the options' labels, in order
    multi: bool = False


@dataclass(frozen=True, slots=True)
class Ask:
    """One request the harness's hook waits on: the receipt that opened the dialog."""

    key: str  # the receipt's key: the hook's decision file is named by it
    tool: str
    tool_input: dict[str, Any]
    at: datetime | None = None
    session_rules: bool = False  # its hook takes an allow that adds a rule for the session

    @property
    def kind(self) -> AskKind:
        return AskKind.QUESTION if self.tool == QUESTION_TOOL and self.questions() else AskKind.PERMISSION

    def questions(self) -> tuple[Question, ...]:
        found = []
        for entry in _list(self.tool_input.get("questions")):
            if not isinstance(entry, dict) or not isinstance(entry.get("question"), str):
                continue
            labels = [o.get("label") for o in _list(entry.get("options")) if isinstance(o, dict)]
            options = tuple(label for label in labels if isinstance(label, str))
            found.append(Question(entry["question"], options, entry.get("multiSelect") is True))
        return tuple(found)


def ask_of(receipt: Receipt, *, session_rules: bool = False) -> Ask:
    """The request a PermissionRequest receipt makes, to a hook that takes a session's rule or not."""
    tool_input = parsed_input(receipt.tool_input)
    found = tool_input if isinstance(tool_input, dict) else {}
    return Ask(receipt.key, receipt.tool, found, receipt.at, session_rules=session_rules)


def open_asks(receipts: Iterable[Receipt], *, taken: Collection[str] = (), session_rules: bool = False) -> list[Ask]:
    """Every request the harness may still wait on, oldest first (`open_requests`)."""
    return [ask_of(receipt, session_rules=session_rules) for receipt in open_requests(receipts, taken=taken)]


def open_ask(receipts: Iterable[Receipt], *, taken: Collection[str] = ()) -> Ask | None:
    """The oldest request the harness may still wait on; None when it waits on none a hook asked."""
    return next(iter(open_asks(receipts, taken=taken)), None)


def blocked_episode(receipts: Iterable[Receipt]) -> str:
    """The key of the first dialog of the stretch the harness is blocked in now — one turn's
    dialogs, however many (a tool allowed, then the next one asking), are one episode; the episode
    ends with the turn, a new prompt, or a restart. "" when not blocked."""
    receipts = list(receipts)
    if harness_state(receipts) is not HarnessState.BLOCKED:
        return ""
    first = ""
    for receipt in receipts:
        if receipt.kind in EPISODE_ENDS:
            first = ""
        elif receipt.kind is ReceiptKind.BLOCKED and not first:
            first = receipt.key
    return first


class WaitingOn(enum.StrEnum):
    """What a blocked agent waits on; its value is the event log's `waiting_on` and the sessions list's."""

    PERMISSION = "permission"  # answerable from the item
    QUESTION = "question"  # answerable from the item
    DIALOG = "dialog"  # only in the pane

    @classmethod
    def of(cls, kind: AskKind) -> WaitingOn:
        return cls.PERMISSION if kind is AskKind.PERMISSION else cls.QUESTION


@dataclass(frozen=True, slots=True)
class Waiting:
    """What a blocked agent waits on, and since when (its receipt's time)."""

    on: WaitingOn
    tool: str = ""  # a permission's tool, fit to show
    since: datetime | None = None

    def seconds(self, now: datetime) -> float | None:
        return max(0.0, (now - self.since).total_seconds()) if self.since else None

    def describe(self, now: datetime) -> str:
        seconds = self.seconds(now)
        took = f" for {duration(seconds)}" if seconds is not None else ""
        if self.on is WaitingOn.PERMISSION:
            how = "`the-loop allow <request>` / `deny <request>`"
            return f"blocked on permission to use `{self.tool}`{took} (answer on the item: {how})"
        if self.on is WaitingOn.QUESTION:
            how = "`the-loop answer <request> <option>`"
            return f"waiting for an answer to its question{took} (answer on the item: {how})"
        return f"blocked on a dialog in its session{took} (answerable only there)"


def waiting_on(receipts: Iterable[Receipt], *, taken: Collection[str] = ()) -> Waiting | None:
    receipts = list(receipts)
    if harness_state(receipts, taken=taken) is not HarnessState.BLOCKED:
        return None
    ask = open_ask(receipts, taken=taken)
    if ask is not None:
        return Waiting(WaitingOn.of(ask.kind), tool_name(ask) if ask.kind is AskKind.PERMISSION else "", ask.at)
    opened = open_dialog(receipts)
    return Waiting(WaitingOn.DIALOG, "", opened.at if opened else None)


class AnswerVerb(enum.Enum):
    ALLOW = "allow"
    ALLOW_ALWAYS = "allow always"
    DENY = "deny"
    ANSWER = "answer"


@dataclass(frozen=True, slots=True)
class Answer:
    """What an authorized comment answered; `text` (a deny's reason, an answer's choice) is theirs;
    `number` the request it names (None: the one open, posted before it was written)."""

    verb: AnswerVerb
    text: str = ""
    number: int | None = None


# ASCII digits only: `str.isdigit` also takes `²` (which `int` refuses) and other scripts' digits
_NUMBER = re.compile(r"[1-9][0-9]{0,8}")  # a request's number
_OPTION = re.compile(r"[0-9]{1,9}")  # an option's number


def answer_of(control: Control) -> Answer | None:
    """The answer a control comment gives, or None when its words fit none. The request's number,
    when given, comes right after the verb (`allow 3`, `deny 3 <reason>`, `answer 3 <option>`);
    `allow always 3` and `allow 3 always` are both read. An answer with more than one word after
    the verb and a number first names its request by it: `answer 3 2` is option 2 of request 3."""
    if control.verb is Verb.ALLOW:
        return _allowed(control.text.split())
    if control.verb not in {Verb.DENY, Verb.ANSWER}:
        return None
    verb = AnswerVerb.DENY if control.verb is Verb.DENY else AnswerVerb.ANSWER
    words = control.text.split()
    # a deny's reason may be one word; an answer's option is: `answer 2` is option 2, no number
    if words and _NUMBER.fullmatch(words[0]) and (verb is AnswerVerb.DENY or len(words) > 1):
        return Answer(verb, control.text.strip()[len(words[0]) :].strip(), int(words[0]))
    return Answer(verb, control.text)


def _allowed(words: list[str]) -> Answer | None:
    """`allow`, `allow N`, `allow always`, `allow always N`, `allow N always`; anything else None."""
    numbers = [int(w) for w in words if _NUMBER.fullmatch(w)]
    rest = [w.casefold() for w in words if not _NUMBER.fullmatch(w)]
    if len(numbers) > 1 or rest not in ([], ["always"]):
        return None
    return Answer(AnswerVerb.ALLOW_ALWAYS if rest else AnswerVerb.ALLOW, number=numbers[0] if numbers else None)


@dataclass(frozen=True, slots=True)
class OpenRequest:
    """A request the harness may still wait on, and its number on the item (None: not posted yet)."""

    ask: Ask
    number: int | None = None
    posted_at: datetime | None = None
    comment_id: str = ""  # its comment on the item ("": not posted, or posted before ids were kept)

    def named(self) -> str:
        what = f"permission to use `{tool_name(self.ask)}`" if self.ask.kind is AskKind.PERMISSION else "a question"
        return f"request {self.number} ({what})" if self.number is not None else f"one not posted yet ({what})"


class Unbound(enum.Enum):
    """Why an answer binds to no request (the event's word); nothing is answered then."""

    NO_REQUEST = "no-request"
    ALREADY_ANSWERED = "already-answered"
    NO_SUCH_REQUEST = "no-such-request"
    SEVERAL_OPEN = "several-open"
    ANOTHER_RECENT = "another-recent"
    WRITTEN_BEFORE = "written-before"
    TOO_LATE = "too-late"
    DOES_NOT_FIT = "does-not-fit"


UNBOUND_SAID = {
    Unbound.NO_REQUEST: "the agent waits on no request now (it was answered in its session, or it went on)",
    Unbound.ALREADY_ANSWERED: "that request was already answered",
    Unbound.NO_SUCH_REQUEST: "its number names no request open now",
    Unbound.SEVERAL_OPEN: "more than one request is open: name the one you answer by its number",
    Unbound.ANOTHER_RECENT: "another request was posted shortly before it, and it may answer that one: "
    "name the one you answer by its number",
    Unbound.WRITTEN_BEFORE: "it was written before that request was posted, so it answers another one",
    Unbound.TOO_LATE: "the agent stopped waiting for an answer here; only its session can answer now",
    Unbound.DOES_NOT_FIT: "its words fit no answer: `the-loop allow [always] <request>`, "
    "`the-loop deny <request> [reason]` or `the-loop answer <request> <option>`",
}


# `posted_at` is the-loop's clock when the request's comment was posted, `written_at` GitHub's for the
# answer: an answer must come this long after the post, so a host clock behind GitHub's by up to this
# much never lets an answer written before the request count for it (a person needs longer to read it)
CLOCK_MARGIN = timedelta(seconds=2)


def bind(
    answer: Answer,
    opened: Sequence[OpenRequest],
    posted: Iterable[PostedRequest],
    *,
    written_at: datetime,
    window: timedelta,
) -> OpenRequest | Unbound:
    """The request an answer written at `written_at` answers: the one its number names, or, with no
    number, the only one open, and only when no other request of the item was posted within
    `window` (how long a hook waits for an answer) before it — its author may be answering that
    one; either way one posted before the answer was written — its author saw it. Anything else
    answers nothing."""
    posted = list(posted)
    found = _named(answer, opened, posted, written_at=written_at)
    if isinstance(found, OpenRequest) and (found.posted_at is None or written_at < found.posted_at + CLOCK_MARGIN):
        return Unbound.WRITTEN_BEFORE
    if isinstance(found, OpenRequest) and answer.number is None and _another_recent(found, posted, written_at, window):
        return Unbound.ANOTHER_RECENT
    return found


def _another_recent(found: OpenRequest, posted: list[PostedRequest], written_at: datetime, window: timedelta) -> bool:
    """Another request was posted within `window` before `written_at` (give or take the margin for
    a host clock behind GitHub's): a bare answer may be meant for it."""
    since, until = written_at - window - CLOCK_MARGIN, written_at + CLOCK_MARGIN
    return any(p.number != found.number and since <= p.posted_at <= until for p in posted)


def _named(
    answer: Answer, opened: Sequence[OpenRequest], posted: list[PostedRequest], *, written_at: datetime
) -> OpenRequest | Unbound:
    seen = [p for p in posted if p.posted_at <= written_at]  # requests its author could have read
    if answer.number is not None:
        found = next((o for o in opened if o.number == answer.number), None)
        if found is not None:
            return found
        return Unbound.ALREADY_ANSWERED if any(p.number == answer.number for p in seen) else Unbound.NO_SUCH_REQUEST
    if not opened:
        return Unbound.ALREADY_ANSWERED if seen else Unbound.NO_REQUEST
    return opened[0] if len(opened) == 1 else Unbound.SEVERAL_OPEN


def no_session_rules(request: int | None) -> str:
    """Why an `allow always` does not fit a request whose hook takes no session's rule, and what does."""
    n = str(request) if request is not None else "<request>"
    return (
        "this agent takes no rule for the session with an allow (its hook refuses one, and the agent would "
        f"ask in its own session instead): write `the-loop allow {n}` to run it this once, "
        f"or `the-loop deny {n} [reason]`"
    )


def decision_for(ask: Ask, answer: Answer, *, item: WorkItemRef, request: int | None = None) -> Decision[str | None]:
    """The hook's whole output for `answer` (Claude Code's PermissionRequest decision), or None
    with the reason the answer does not fit the request (`request`: its number, for those words)."""
    if ask.kind is AskKind.QUESTION:
        return _question_decision(ask, answer, item=item)
    if answer.verb is AnswerVerb.ALLOW:
        return Decision(_output({"behavior": "allow"}), "allowed once")
    if answer.verb is AnswerVerb.ALLOW_ALWAYS and not ask.session_rules:
        return Decision(None, no_session_rules(request))
    if answer.verb is AnswerVerb.ALLOW_ALWAYS:
        rule = {"type": "addRules", "rules": [{"toolName": ask.tool}], "behavior": "allow", "destination": "session"}
        return Decision(_output({"behavior": "allow", "updatedPermissions": [rule]}), "allowed for the session")
    if answer.verb is AnswerVerb.DENY:
        return Decision(_output({"behavior": "deny", "message": _denied(answer, item)}), "denied")
    return Decision(None, "that request is a permission: answer it with `the-loop allow` or `the-loop deny`")


def _question_decision(ask: Ask, answer: Answer, *, item: WorkItemRef) -> Decision[str | None]:
    if answer.verb is AnswerVerb.DENY:
        return Decision(_output({"behavior": "deny", "message": _denied(answer, item)}), "declined")
    if answer.verb is not AnswerVerb.ANSWER:
        return Decision(None, "that request is a question: answer it with `the-loop answer <request> <option>`")
    questions = ask.questions()
    choices = _choices(questions, answer.text)
    if choices is None:
        return Decision(None, "the answer names no option: `the-loop answer <request> <option>`, one per question")
    answers = {q.text: label for q, label in zip(questions, choices, strict=True)}
    return Decision(_output({"behavior": "allow", "updatedInput": {**ask.tool_input, "answers": answers}}), "answered")


def _choices(questions: tuple[Question, ...], text: str) -> list[str] | None:
    """The option label chosen for each question: by its number, or (one question) by its label."""
    words = text.split()
    if len(questions) == 1 and not (len(words) == 1 and _OPTION.fullmatch(words[0])):
        wanted = text.strip().casefold()
        label = next((o for o in questions[0].options if o.casefold() == wanted), None)
        return [label] if label is not None else None
    if len(words) != len(questions) or not all(_OPTION.fullmatch(w) for w in words):
        return None
    picked = []
    for question, word in zip(questions, words, strict=True):
        number = int(word)
        if not 1 <= number <= len(question.options):
            return None
        picked.append(question.options[number - 1])
    return picked


def _denied(answer: Answer, item: WorkItemRef) -> str:
    said = f" Their reason: {cap(sanitize(answer.text.strip()), REASON_LIMIT)}" if answer.text.strip() else ""
    return f"A person answering on {item} denied this.{said}"


def _output(decision: dict[str, Any]) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}})


def tool_name(ask: Ask) -> str:
    return ask.tool if _TOOL_NAME.match(ask.tool) else "(a tool whose name cannot be shown)"


_HEADER = f"{AGENT_MARKER}\n> 🤖 **the-loop** (the agent of this item waits for an answer)\n\n"
_LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$")


class AnswerSource(enum.Enum):
    """Where an answer was given; its value is the `source` of the event a page's answer writes."""

    GITHUB = "github"  # a comment on the item
    PAGE = "page"  # a button on the fleet page


@dataclass(frozen=True, slots=True)
class Answered:
    """How a request was answered (the decision's own words), by whom, from where, and when."""

    how: str  # `decision_for`'s reason: allowed once, allowed for the session, denied, answered, declined
    source: AnswerSource
    at: datetime
    login: str = ""  # the comment's author; "" from the page (its token names no one)

    def line(self) -> str:
        """The line the request's comment is edited to begin with: the-loop's words and a login only."""
        if self.source is AnswerSource.PAGE:
            who = "from the fleet page"
        else:
            login = f"@{self.login}" if _LOGIN.match(self.login) else "an authorized user"
            who = f"by {login} on GitHub"
        return f"> ✅ **Answered**: {self.how} {who} at {self.at:%H:%M} UTC."


def ask_comment(
    item: WorkItemRef, ask: Ask, *, number: int, wait_seconds: float, answered: Answered | None = None
) -> str:
    """The one comment a request gets: its number, what the agent asks, fenced, and how to answer it;
    once answered (`answered`), it begins by saying so."""
    body = _asked(item, ask, number=number, wait_seconds=wait_seconds)
    if answered is None:
        return body
    return body.replace(f"{AGENT_MARKER}\n", f"{AGENT_MARKER}\n{answered.line()}\n>\n", 1)


def _asked(item: WorkItemRef, ask: Ask, *, number: int, wait_seconds: float) -> str:
    minutes = f"{wait_seconds / 60:g} minutes" if wait_seconds >= 60 else f"{wait_seconds:g} seconds"
    after = (
        f"\n\nThe agent waits for an answer here up to {minutes}; after that only someone attached to its "
        f"session can answer (`the-loop sessions attach --work-item {item}`). New comments are held, not lost, "
        "until it goes on."
    )
    bare = (
        f"\n\nWithout the number (`the-loop allow`) an answer counts only while request {number} is the only "
        f"one open, only when written after this comment, and only when no other request was posted in the "
        f"{minutes} before it was written (it may answer that one): write the number."
    )
    if ask.kind is AskKind.QUESTION:
        return (
            f"{_HEADER}**Request {number}**: the agent **asks a question**:\n\n{_questions(ask, number)}{bare}{after}\n"
        )
    shown = published_input(ask.tool_input, limit=INPUT_LIMIT)
    always = (
        f"- `the-loop allow always {number}` — run it, and every later `{tool_name(ask)}` of this session "
        "without asking\n"
        if ask.session_rules
        else ""
    )
    return (
        f"{_HEADER}**Request {number}**: the agent asks **permission to use `{tool_name(ask)}`** with this "
        f"input (the agent's text; secrets are redacted and a file's text is shortened: the whole input is "
        f"read on the host):\n\n{shown}\n\n"
        "To answer, an authorized person comments, alone on the first line:\n"
        f"- `the-loop allow {number}` — run it this once\n"
        f"{always}"
        f"- `the-loop deny {number} [reason]` — do not run it; the agent is told the reason and goes on"
        f"{bare}{after}\n"
    )


def _questions(ask: Ask, request: int) -> str:
    parts = []
    for number, question in enumerate(ask.questions(), start=1):
        options = "\n".join(f"{n}. {option}" for n, option in enumerate(question.options, start=1))
        text = redact(f"{question.text}\n\n{options}")
        parts.append(f"Question {number}:\n\n{untrusted_block(text, 'text', limit=INPUT_LIMIT)}")
    several = len(parts) > 1
    how = (
        f"`the-loop answer {request} <number> <number> …` (one option's number per question, in order)"
        if several
        else f"`the-loop answer {request} <number>` (or `the-loop answer {request} <the option's text>`)"
    )
    return (
        "\n\n".join(parts) + f"\n\nTo answer, an authorized person comments, alone on the first line: {how}; "
        f"`the-loop deny {request} [reason]` declines to answer."
    )


def answered_reply(*, why: str, opened: Sequence[OpenRequest] = ()) -> str:
    """To an answer not used: why, and the requests open now — the-loop's own words and values only,
    never the answer's text."""
    listed = ", ".join(request.named() for request in opened)
    now = f"Open now: {listed}; answer one by its number." if listed else "No request of the agent is open now."
    return f"{_HEADER}That answer was **not used**: {why}. Nothing was approved.\n\n{now}\n"


def pane_answered_notice(number: int) -> str:
    """A request posted here was answered in the session; named by its number, the-loop's own value."""
    return (
        f"{_HEADER}The agent's request {number} was **answered in its session** (by someone attached to it, "
        "or there after the wait here ended); an answer here is no longer needed.\n"
    )


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
