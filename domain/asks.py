"""Issue 20: what the agent asks a person — a permission to use a tool, or a question — put on the
work item, and the answer an authorized comment gives back.

Claude Code's PermissionRequest hook (pinned in tests/claude/test_claude_permission_facts.py) fires
for every tool that asks, AskUserQuestion included, and takes a decision as its output: allow
(with `updatedPermissions` for a rule of the session, or `updatedInput.answers` answering a
question) or deny with a message the model reads. The tool and its input are the agent's text:
shown only fenced and sanitized, and the answer is built by the-loop from a number or an option's
own label — never from the comment's text, but for a deny's reason, which goes to the agent only.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from domain.model import AGENT_MARKER
from domain.policy import Decision
from domain.prompts import cap, sanitize, untrusted_block
from domain.receipts import HarnessState, Receipt, ReceiptKind, harness_state, open_dialog
from domain.redaction import published_input, redact
from domain.refs import WorkItemRef

QUESTION_TOOL = "AskUserQuestion"
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


def open_ask(receipts: Iterable[Receipt]) -> Ask | None:
    """The request the harness waits on now, when a hook asked (PermissionRequest); None when it
    waits on nothing, or on a dialog no hook can answer."""
    opened = open_dialog(receipts)
    if opened is None or not opened.tool:
        return None
    try:
        tool_input = json.loads(opened.tool_input or "{}")
    except ValueError:
        tool_input = {}
    return Ask(opened.key, opened.tool, tool_input if isinstance(tool_input, dict) else {}, opened.at)


_EPISODE_ENDS = {ReceiptKind.READY, ReceiptKind.PROMPT, ReceiptKind.TURN_ENDED, ReceiptKind.TURN_FAILED}


def blocked_episode(receipts: Iterable[Receipt]) -> str:
    """Issue 20 item 5: the key of the first dialog of the stretch the harness is blocked in now —
    one turn's dialogs, however many (a tool allowed, then the next one asking), are one episode;
    the episode ends with the turn, a new prompt, or a restart. "" when not blocked."""
    receipts = list(receipts)
    if harness_state(receipts) is not HarnessState.BLOCKED:
        return ""
    first = ""
    for receipt in receipts:
        if receipt.kind in _EPISODE_ENDS:
            first = ""
        elif receipt.kind is ReceiptKind.BLOCKED and not first:
            first = receipt.key
    return first


@dataclass(frozen=True, slots=True)
class Waiting:
    """Issue 20 item 5: what a blocked agent waits on, and since when (its receipt's time)."""

    on: str  # "permission", "question" (answerable from the item), or "dialog" (only in the pane)
    tool: str = ""  # a permission's tool, fit to show
    since: datetime | None = None

    def seconds(self, now: datetime) -> float | None:
        return max(0.0, (now - self.since).total_seconds()) if self.since else None

    def describe(self, now: datetime) -> str:
        seconds = self.seconds(now)
        took = f" for {duration(seconds)}" if seconds is not None else ""
        if self.on == AskKind.PERMISSION.value:
            return f"blocked on permission to use `{self.tool}`{took} (answer on the item: `the-loop allow` / `deny`)"
        if self.on == AskKind.QUESTION.value:
            return f"waiting for an answer to its question{took} (answer on the item: `the-loop answer <number>`)"
        return f"blocked on a dialog in its session{took} (answerable only there)"


def waiting_on(receipts: Iterable[Receipt]) -> Waiting | None:
    receipts = list(receipts)
    if harness_state(receipts) is not HarnessState.BLOCKED:
        return None
    ask = open_ask(receipts)
    if ask is not None:
        return Waiting(ask.kind.value, tool_name(ask) if ask.kind is AskKind.PERMISSION else "", ask.at)
    opened = open_dialog(receipts)
    return Waiting("dialog", "", opened.at if opened else None)


def duration(seconds: float) -> str:
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


class AnswerVerb(enum.Enum):
    ALLOW = "allow"
    ALLOW_ALWAYS = "allow always"
    DENY = "deny"
    ANSWER = "answer"


@dataclass(frozen=True, slots=True)
class Answer:
    """What an authorized comment answered; `text` (a deny's reason, an answer's choice) is theirs."""

    verb: AnswerVerb
    text: str = ""


def decision_for(ask: Ask, answer: Answer, *, item: WorkItemRef) -> Decision[str | None]:
    """The hook's whole output for `answer` (Claude Code's PermissionRequest decision), or None
    with the reason the answer does not fit the request."""
    if ask.kind is AskKind.QUESTION:
        return _question_decision(ask, answer, item=item)
    if answer.verb is AnswerVerb.ALLOW:
        return Decision(_output({"behavior": "allow"}), "allowed once")
    if answer.verb is AnswerVerb.ALLOW_ALWAYS:
        rule = {"type": "addRules", "rules": [{"toolName": ask.tool}], "behavior": "allow", "destination": "session"}
        return Decision(_output({"behavior": "allow", "updatedPermissions": [rule]}), "allowed for the session")
    if answer.verb is AnswerVerb.DENY:
        return Decision(_output({"behavior": "deny", "message": _denied(answer, item)}), "denied")
    return Decision(None, "this request is a permission: answer it with `the-loop allow` or `the-loop deny`")


def _question_decision(ask: Ask, answer: Answer, *, item: WorkItemRef) -> Decision[str | None]:
    if answer.verb is AnswerVerb.DENY:
        return Decision(_output({"behavior": "deny", "message": _denied(answer, item)}), "declined")
    if answer.verb is not AnswerVerb.ANSWER:
        return Decision(None, "this request is a question: answer it with `the-loop answer <number>`")
    questions = ask.questions()
    choices = _choices(questions, answer.text)
    if choices is None:
        return Decision(None, "the answer names no option: `the-loop answer <number>`, one number per question")
    answers = {q.text: label for q, label in zip(questions, choices, strict=True)}
    return Decision(_output({"behavior": "allow", "updatedInput": {**ask.tool_input, "answers": answers}}), "answered")


def _choices(questions: tuple[Question, ...], text: str) -> list[str] | None:
    """The option label chosen for each question: by its number, or (one question) by its label."""
    words = text.split()
    if len(questions) == 1 and not (len(words) == 1 and words[0].isdigit()):
        wanted = text.strip().casefold()
        label = next((o for o in questions[0].options if o.casefold() == wanted), None)
        return [label] if label is not None else None
    if len(words) != len(questions) or not all(w.isdigit() for w in words):
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


def ask_comment(item: WorkItemRef, ask: Ask, *, wait_seconds: float) -> str:
    """The one comment a request gets: what the agent asks, fenced, and how to answer it."""
    minutes = f"{wait_seconds / 60:g} minutes" if wait_seconds >= 60 else f"{wait_seconds:g} seconds"
    after = (
        f"\n\nThe agent waits for an answer here up to {minutes}; after that only someone attached to its "
        f"session can answer (`the-loop sessions attach --work-item {item}`). New comments are held, not lost, "
        "until it goes on."
    )
    if ask.kind is AskKind.QUESTION:
        return f"{_HEADER}The agent **asks a question**:\n\n{_questions(ask)}{after}\n"
    shown = published_input(ask.tool_input, limit=INPUT_LIMIT)
    return (
        f"{_HEADER}The agent asks **permission to use `{tool_name(ask)}`** with this input (the agent's "
        f"text, shown as it is):\n\n{shown}\n\n"
        "To answer, an authorized person comments, alone on the first line:\n"
        "- `the-loop allow` — run it this once\n"
        f"- `the-loop allow always` — run it, and every later `{tool_name(ask)}` of this session without asking\n"
        "- `the-loop deny [reason]` — do not run it; the agent is told the reason and goes on"
        f"{after}\n"
    )


def _questions(ask: Ask) -> str:
    parts = []
    for number, question in enumerate(ask.questions(), start=1):
        options = "\n".join(f"{n}. {option}" for n, option in enumerate(question.options, start=1))
        text = redact(f"{question.text}\n\n{options}")
        parts.append(f"Question {number}:\n\n{untrusted_block(text, 'text', limit=INPUT_LIMIT)}")
    several = len(parts) > 1
    how = (
        "`the-loop answer <number> <number> …` (one number per question, in order)"
        if several
        else "`the-loop answer <number>` (or `the-loop answer <the option's text>`)"
    )
    return (
        "\n\n".join(parts) + f"\n\nTo answer, an authorized person comments, alone on the first line: {how}; "
        "`the-loop deny [reason]` declines to answer."
    )


def answered_reply(*, why: str) -> str:
    """To an answer that came too late or second: the-loop's own words only."""
    return f"{_HEADER}That answer was **not used**: {why}.\n"


def pane_answered_notice(asked_at: datetime | None) -> str:
    """The request posted last was answered in the session; named by its time, the-loop's own value."""
    when = f" (asked at {asked_at:%H:%M:%S} UTC)" if asked_at else ""
    return (
        f"{_HEADER}The agent's request{when} was **answered in its session** (by someone attached to it, "
        "or there after the wait here ended); an answer here is no longer needed.\n"
    )


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
