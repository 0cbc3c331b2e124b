"""Receipts: what a harness said about itself and the prompts it got, and what follows from them.

A harness with receipts (Claude Code through its hooks, or a harness that writes receipt files
itself) tells the-loop when it is ready, when a prompt reached the agent, when a turn ended and when
it waits on a dialog. A delivery counts only when a receipt names it: the prompt's header carries
the delivery id and a tag only the-loop can make (an HMAC of the id), so no text a comment author
writes can confirm a delivery that did not happen.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import json
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

TAG_LENGTH = 16  # hex digits of the HMAC: 64 bits, unguessable for a comment author
# Claude Code may draw a permission dialog, taking keys, before its PermissionRequest hook has
# written a receipt (seen 1 in 3 under load), but only after its PreToolUse hook has: a paste waits
# this long after PreToolUse, when any dialog has said so (measured 0.1-0.6 s after it).
TOOL_GRACE_SECONDS = 2.0
PASTED_PLACEHOLDER = "[Pasted Text: "  # Gemini CLI's input box shows a long paste so
QUESTION_TOOL = "AskUserQuestion"  # Claude Code's tool asking a person a question
_WHY = "description"  # a request's key for why it asks, which its run may not repeat


class ReceiptMode(enum.Enum):
    """How a harness confirms what it got: the kind of channel, never which agent (a harness
    package's own hooks are named by `HarnessSpec.hooks`)."""

    HOOKS = "hooks"  # a spawn is handed its harness package's hooks, which write receipt files
    FILE = "file"  # the harness writes receipt files itself into $THE_LOOP_RECEIPTS
    NONE = "none"  # no receipts: confirmation is the pane still alive after confirmSeconds


class ReceiptKind(enum.Enum):
    READY = "ready"  # the harness started (or resumed) a conversation and reads its input
    PROMPT = "prompt"  # a prompt reached the agent (submitted, or queued while it was busy)
    TOOL = "tool"  # the agent is about to run a tool (it may ask for permission first)
    WORKING = "working"  # the agent went on with its turn (a tool ran)
    TURN_ENDED = "turn-ended"
    TURN_FAILED = "turn-failed"
    BLOCKED = "blocked"  # the agent waits for a person to answer a dialog in its session
    IDLE = "idle"  # the agent has waited for input a while
    ENDED = "ended"  # the conversation ended (the harness is exiting)


@dataclass(frozen=True, slots=True)
class Receipt:
    """One thing a harness said. `prompt` and `detail` are the harness's text: never trusted."""

    kind: ReceiptKind
    key: str  # orders receipts of one spawn (their files' names)
    at: datetime | None = None  # when it was written, as the machine's clock read then
    conversation: str = ""  # the harness's own session id
    source: str = ""  # READY: startup, resume, …
    prompt: str = ""  # PROMPT: the text as the agent got it
    detail: str = ""  # TURN_FAILED: the error; BLOCKED, IDLE: the notification
    tool: str = ""  # BLOCKED by a permission request: the tool it asks for; WORKING: the tool that ran
    tool_input: str = ""  # …and its input, as JSON text: the agent's, never trusted
    message: str = ""  # TURN_FAILED: the error's text as the harness showed it (a reset time, maybe)
    # the harness's own id of the turn the receipt is about (Claude Code's prompt_id, Codex's turn_id)
    # and the file its conversation is written to: where a turn's usage is read, from its end's receipt
    turn: str = ""
    transcript: str = ""


class HarnessState(enum.Enum):
    """What a session's harness is doing, from its receipts and its pane."""

    STARTING = "starting"  # spawned, has not said it is ready
    READY = "ready"  # ready, no prompt yet
    BUSY = "busy"  # working on a prompt
    TOOL = "tool"  # about to run a tool, a moment ago: a permission dialog may open any instant
    IDLE = "idle"  # its turn ended; waiting for input
    BLOCKED = "blocked"  # waiting on a dialog (a permission prompt)
    ENDED = "ended"  # said its conversation ended
    DEAD = "dead"  # its pane is dead or gone
    UNKNOWN = "unknown"  # tmux did not answer

    @property
    def accepts_prompts(self) -> bool:
        """A paste now reaches the agent (a busy Claude Code queues it)."""
        return self in {HarnessState.READY, HarnessState.BUSY, HarnessState.IDLE}


_AFTER: dict[ReceiptKind, HarnessState] = {
    ReceiptKind.READY: HarnessState.READY,
    ReceiptKind.PROMPT: HarnessState.BUSY,
    ReceiptKind.TOOL: HarnessState.TOOL,
    ReceiptKind.WORKING: HarnessState.BUSY,
    ReceiptKind.TURN_ENDED: HarnessState.IDLE,
    ReceiptKind.TURN_FAILED: HarnessState.IDLE,
    ReceiptKind.BLOCKED: HarnessState.BLOCKED,
    ReceiptKind.IDLE: HarnessState.IDLE,
    ReceiptKind.ENDED: HarnessState.ENDED,
}

# until its ready receipt a harness is starting, whatever it said first; a dialog or an end is one
_LEAVE_STARTING = frozenset({ReceiptKind.READY, ReceiptKind.BLOCKED, ReceiptKind.ENDED})


def harness_state(
    receipts: Iterable[Receipt], *, now: datetime | None = None, taken: Collection[str] = ()
) -> HarnessState:
    """The state the receipts of one spawn leave the harness in (its pane is judged elsewhere).
    A dialog is left by the next receipt that is not about waiting: a tool ran (it was allowed),
    a prompt came (someone typed into the session), the turn ended, or the harness restarted. A
    dialog declined in Claude Code writes no receipt at all: it stays blocked until the next one.
    While a permission request is still open (`open_requests`; `taken`: the keys of requests whose
    hook took a decision) the harness is blocked whatever came since: another tool of the same
    message ran, its dialog is still on screen. A tool about to run is TOOL until
    `TOOL_GRACE_SECONDS` after it, as of `now`; then (or with no `now`) BUSY."""
    receipts = list(receipts)
    state, last = HarnessState.STARTING, None
    for receipt in receipts:
        state, last = _after(state, receipt), receipt
    if state in _STILL_ASKING and open_requests(receipts, taken=taken):
        return HarnessState.BLOCKED
    if state is HarnessState.TOOL and not _within_grace(last, now):
        return HarnessState.BUSY
    return state


# a request stands through these; a new prompt, a turn's end, a restart or an exit ends them all
_STILL_ASKING = frozenset({HarnessState.TOOL, HarnessState.BUSY, HarnessState.IDLE})
EPISODE_ENDS = frozenset(
    {ReceiptKind.READY, ReceiptKind.PROMPT, ReceiptKind.TURN_ENDED, ReceiptKind.TURN_FAILED, ReceiptKind.ENDED}
)


def open_requests(receipts: Iterable[Receipt], *, taken: Collection[str] = ()) -> list[Receipt]:
    """The permission requests the harness may still wait on, oldest first: each a hook asked (a
    BLOCKED receipt naming a tool) since the turn began, whose hook took no decision (its key not
    in `taken`) and whose tool has not run since. Claude Code asks for every tool of one message at
    once (two PermissionRequest hooks ~3 ms apart) and runs each tool as soon as its own request is
    allowed, while the next dialog still waits (tests/claude/test_claude_permission_facts.py)."""
    found: list[Receipt] = []
    for receipt in receipts:
        if receipt.kind in EPISODE_ENDS:
            found = []
        elif receipt.kind is ReceiptKind.BLOCKED and receipt.tool:
            found.append(receipt)
        elif receipt.kind is ReceiptKind.WORKING and (ran := _request_run(found, receipt)) is not None:
            found.remove(ran)
    return [receipt for receipt in found if receipt.key not in taken]


def _request_run(requests: list[Receipt], ran: Receipt) -> Receipt | None:
    """The request a tool's run answers: the oldest for the same tool with the same input. A question
    (AskUserQuestion) runs with the answers it was given added to its input: the same but for them.
    A request may say why it asks (`description`, the model's justification) where its run does not
    (tests/codex/test_codex_permission_facts.py): the same but for that.
    A run of another input (a tool the same message used unasked, say) answers none, nor does a run
    naming no tool (opencode and Gemini CLI name none, and their requests are not hook requests):
    such a request stays open until the turn ends, and comments are held meanwhile, never lost."""
    if not ran.tool:
        return None
    done = _parsed(ran.tool_input)
    for request in requests:
        if request.tool != ran.tool:
            continue
        asked = _parsed(request.tool_input)
        if asked == done or (ran.tool == QUESTION_TOOL and _unanswered(asked) == _unanswered(done)):
            return request
        if _without_why(asked, done) == done:
            return request
    return None


def _without_why(asked: object, done: object) -> object:
    """A request's input without the why it gave, when its run gives none."""
    if isinstance(asked, dict) and isinstance(done, dict) and _WHY not in done:
        return {key: value for key, value in asked.items() if key != _WHY}
    return asked


def _unanswered(tool_input: object) -> object:
    """A question's input without the answers an answer adds to it."""
    if isinstance(tool_input, dict):
        return {key: value for key, value in tool_input.items() if key != "answers"}
    return tool_input


def _parsed(text: str) -> object:
    parsed = parsed_input(text)
    return text if isinstance(parsed, str) else parsed


INPUT_DEPTH = 100  # levels of a tool's input read; an input nested deeper is read as unreadable


def parsed_input(text: str) -> object:
    """A tool's input as a receipt holds it (JSON text), parsed: text that is no JSON stays text,
    and an input nested deeper than `INPUT_DEPTH`, or past what the parser takes (it raises
    RecursionError), is `unreadable_input` — never an error that would stop every read of the item."""
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return text
    except RecursionError:
        return unreadable_input(text)
    return unreadable_input(text) if too_deep(value) else value


def unreadable_input(text: str) -> dict[str, str]:
    """What stands for a tool's input too deeply nested to read: the-loop's words, and the digest
    of its text, so a run of the same input still answers the request that named it."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return {"the-loop": "this input is nested too deep to read here: read it whole on the host", "sha256": digest}


def too_deep(value: object, *, levels: int = INPUT_DEPTH) -> bool:
    """`value` nests lists and objects more than `levels` deep (read without recursion)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth >= levels:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def open_dialog(receipts: Iterable[Receipt]) -> Receipt | None:
    """The receipt that opened the dialog the harness waits on now; None when it waits on none.
    Claude Code says it twice for one dialog (PermissionRequest at once, the permission_prompt
    notification ~6 s later, while it is still open): both name the same dialog."""
    state, opened = HarnessState.STARTING, None
    for receipt in receipts:
        state, was = _after(state, receipt), state
        if state is not HarnessState.BLOCKED:
            opened = None
        elif was is not HarnessState.BLOCKED:
            opened = receipt
    return opened


def _within_grace(receipt: Receipt | None, now: datetime | None) -> bool:
    if receipt is None or receipt.at is None or now is None:
        return False
    return (now - receipt.at).total_seconds() < TOOL_GRACE_SECONDS


def _after(state: HarnessState, receipt: Receipt) -> HarnessState:
    if receipt.kind in {ReceiptKind.IDLE, ReceiptKind.BLOCKED} and state is HarnessState.BLOCKED:
        return state  # Claude Code also says "idle", or asks again, while its dialog waits
    if state is HarnessState.STARTING and receipt.kind not in _LEAVE_STARTING:
        return state  # opencode takes its first prompt before its TUI shows the session: not ready yet
    return _AFTER[receipt.kind]


def delivery_tag(secret: str, delivery_id: str) -> str:
    """The tag a prompt's header carries next to its delivery id."""
    return hmac.new(secret.encode(), delivery_id.encode(), hashlib.sha256).hexdigest()[:TAG_LENGTH]


def receipt_line(delivery_id: str, tag: str) -> str:
    """The header line a prompt carries and a receipt must contain to confirm the delivery."""
    return f"Delivery: {delivery_id} (receipt {tag})"


def still_typed(screen: str, line: str) -> bool:
    """The prompt carrying `line` still sits in the harness's input box: its line, or the
    placeholder Gemini CLI shows for a paste of more than 5 lines or 500 characters
    (`[Pasted Text: 12 lines]`), shows below the screen's last horizontal rule (the box's top
    edge; what was submitted scrolls above it)."""
    rows = screen.splitlines()
    rule = max((i for i, row in enumerate(rows) if row.strip().startswith("─" * 8)), default=-1)
    return rule >= 0 and any(line in row or PASTED_PLACEHOLDER in row for row in rows[rule + 1 :])


def confirms(receipts: Iterable[Receipt], line: str) -> bool:
    """Some prompt receipt holds the delivery's header line (a paste may arrive wrapped)."""
    return any(r.kind is ReceiptKind.PROMPT and line in r.prompt for r in receipts)


def turns_ended(receipts: Iterable[Receipt]) -> int:
    """How many turns the agent said ended, well or failed: one more is a turn to close."""
    return sum(r.kind in {ReceiptKind.TURN_ENDED, ReceiptKind.TURN_FAILED} for r in receipts)


def turn_ended_after(receipts: Sequence[Receipt], line: str) -> bool:
    """The agent's turn for that prompt ended."""
    return ended_turn(receipts, line) is not None


@dataclass(frozen=True, slots=True)
class EndedTurn:
    """A prompt's receipt and the receipt of the turn end that closed it."""

    prompt: Receipt
    end: Receipt
    # the receipt of the prompt that started the turn this one joined; None: this prompt started it
    joined: Receipt | None = None


def ended_turn(receipts: Sequence[Receipt], line: str) -> EndedTurn | None:
    """The prompt holding `line` and the end of the agent's turn for it; None while it runs, or when
    its turn failed (`closed_turn`)."""
    closed = closed_turn(receipts, line)
    return closed if closed is not None and closed.end.kind is ReceiptKind.TURN_ENDED else None


def closed_turn(receipts: Sequence[Receipt], line: str) -> EndedTurn | None:
    """The prompt holding `line` and the end, well or failed, that closed its turn; None while it runs.
    A turn's end closes every open prompt whose receipt names its turn: a prompt typed while the
    agent works may join the running turn, its receipt naming that turn, and one end closes both —
    even one typed as the turn's end was being said, which the turn then goes on for and ends again
    (tests/codex/test_codex_usage_facts.py). A prompt naming a turn an earlier prompt named joined
    it. An end naming no open prompt's turn (or none) closes the oldest open prompt: prompts whose
    receipts name no turn, queued while the agent was busy, are taken in order."""
    open_prompts: list[Receipt] = []
    started: dict[str, Receipt] = {}  # each turn a prompt named: the prompt that started it
    for receipt in receipts:
        if receipt.kind is ReceiptKind.PROMPT:
            open_prompts.append(receipt)
            if receipt.turn:
                started.setdefault(receipt.turn, receipt)
        elif receipt.kind in _TURN_ENDS and open_prompts:
            named = [p for p in open_prompts if receipt.turn and p.turn == receipt.turn]
            for prompt in named or open_prompts[:1]:
                open_prompts.remove(prompt)
                if line in prompt.prompt:
                    first = started[prompt.turn] if prompt.turn else prompt
                    return EndedTurn(prompt, receipt, joined=None if first is prompt else first)
    return None


_TURN_ENDS = frozenset({ReceiptKind.TURN_ENDED, ReceiptKind.TURN_FAILED})


_DELIVERY_LINE = re.compile(rf"Delivery: (\S+) \(receipt ([0-9a-f]{{{TAG_LENGTH}}})\)")


def delivery_of(prompt: Receipt, secret: str) -> str:
    """The delivery a prompt's receipt carries: the first header line in its text whose tag is
    the-loop's ('' for a prompt the-loop did not give — a person typed it). A line a comment
    author wrote has no such tag."""
    for found in _DELIVERY_LINE.finditer(prompt.prompt):
        if hmac.compare_digest(found.group(2), delivery_tag(secret, found.group(1))):
            return found.group(1)
    return ""


def conversation_of(receipts: Iterable[Receipt]) -> str:
    """The conversation the harness last said it was ready in, else the one its first prompt
    receipt names ('' when neither said): how the-loop learns the id of a harness that names its
    conversations itself (Codex, opencode — whose ready receipt waits for its TUI, and a kill may
    come first, after the prompt was taken)."""
    receipts = list(receipts)
    ready = (r.conversation for r in reversed(receipts) if r.kind is ReceiptKind.READY and r.conversation)
    prompted = (r.conversation for r in receipts if r.kind is ReceiptKind.PROMPT and r.conversation)
    return next(ready, "") or next(prompted, "")
