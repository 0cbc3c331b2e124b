"""Values the policies and use cases speak in."""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from domain.budget import RateBudget as RateBudget  # noqa: PLC0414 - re-exported: trackers name it here
from domain.comment_kind import CommentKind as CommentKind  # noqa: PLC0414 - re-exported: comments name it here
from domain.errors import MissingVariable
from domain.markdown import prose_lines
from domain.park import Park
from domain.receipts import ReceiptMode
from domain.refs import Naming, RepoRef, TmuxTarget, WorkItemRef

AGENT_MARKER = "<!-- the-loop:agent-comment -->"


def carries_marker(body: str) -> bool:
    """The agent marker as the-loop and the agent write it: in the text, not in code or a quote —
    where a person only mentions it (a code span, a quote reply to one of the-loop's notices)."""
    return any(AGENT_MARKER in line for line in prose_lines(body))


class SessionState(enum.Enum):
    """What tmux says about a target."""

    LIVE = "live"  # a pane still runs
    DEAD = "dead"  # every pane exited, kept by remain-on-exit
    ABSENT = "absent"  # tmux answered: no such session
    UNKNOWN = "unknown"  # tmux did not answer: timeout, error, no binary


@dataclass(frozen=True, slots=True)
class Probe:
    """What tmux says about a target and about the harness's own pane in it (found by its mark)."""

    session: SessionState  # LIVE: some pane runs; DEAD: every pane exited; ABSENT; UNKNOWN
    harness: SessionState  # the marked pane: LIVE, DEAD, ABSENT (no pane carries the mark), UNKNOWN
    pane: str = ""  # the marked pane's id, when found
    others_live: bool = False  # a pane other than the harness's runs (an operator's window)

    @classmethod
    def unknown(cls) -> Probe:
        return cls(SessionState.UNKNOWN, SessionState.UNKNOWN)


class SessionStatus(enum.Enum):
    ACTIVE = "active"
    PAUSED = "paused"
    CLOSED = "closed"


class ItemState(enum.Enum):
    """Where a work item stands upstream."""

    OPEN = "open"
    CLOSED = "closed"
    MERGED = "merged"
    UNLABELED = "unlabeled"  # still open, but the source's label was removed


class ItemKind(enum.Enum):
    ISSUE = "issue"
    PULL_REQUEST = "pull_request"


class Reaction(enum.Enum):
    STARTED = "started"  # 👀 by default: the prompt went into the harness
    SUCCEEDED = "succeeded"  # 🎉: the harness confirmed it
    FAILED = "failed"  # 😕: an attempt failed
    TURN_ENDED = "turn-ended"  # 🚀: the agent's turn for it ended
    CONTROL = "control"  # 👍: a control comment was executed


class SpawnMode(enum.Enum):
    NEVER = "never"
    LABELED = "labeled"
    ALWAYS = "always"


@dataclass(frozen=True, slots=True)
class WorkItem:
    ref: WorkItemRef
    title: str
    author: str | None
    labels: frozenset[str]
    kind: ItemKind = ItemKind.ISSUE
    body: str = ""
    url: str = ""
    created_at: datetime | None = None  # the tracker's clock; None when the source did not say


@dataclass(frozen=True, slots=True)
class PullHead:
    """Where a pull request's head is: its repository and commit."""

    repo: str  # the head repository's `owner/name`; "" when it was deleted
    sha: str
    fork: bool  # another repository than the base (a deleted one counts): its code is nobody's we know


@dataclass(frozen=True, slots=True)
class Comment:
    """A comment on a work item. `body` and `author` are untrusted."""

    id: str
    item: WorkItemRef
    author: str | None
    body: str
    created_at: datetime
    url: str = ""
    kind: CommentKind = CommentKind.ISSUE_COMMENT
    path: str | None = None
    line: int | None = None
    # changed after it was written, before this read: `author` may not have written what `body`
    # now says; `editor` is who last changed it (the tracker's login; None: not known)
    edited: bool = False
    editor: str | None = None
    # posted by the login the-loop itself writes as, when the tracker can tell (a GitHub App's bot);
    # never for a person's login, which the operator and the agent may share
    by_us: bool = False

    @property
    def delivery_id(self) -> DeliveryId:
        return DeliveryId.for_comment(self.id)

    @property
    def is_ours(self) -> bool:
        """The-loop's own or its agent's: written by the login the-loop writes as, or carrying the
        agent marker in its text (a person quoting one of its notices is not)."""
        return self.by_us or carries_marker(self.body)


@dataclass(frozen=True, slots=True)
class DeliveryId:
    """Stable id of one event; the same comment by poll or webhook maps to the same id."""

    value: str

    @classmethod
    def for_comment(cls, comment_id: str) -> DeliveryId:
        return cls(f"poll-comment-{comment_id}")

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class CommentBatch:
    """New comments of one repository since a cursor, and the cursor to keep after them.
    `started_at` (the tracker's clock) is set only on the batch that started the streams."""

    comments: tuple[Comment, ...]
    cursor: str | None
    started_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Arming:
    """When an item was armed (its latest `labeled` event for the label, by the tracker's clock;
    its creation when there is none) and its comments created at or after then, oldest first."""

    armed_at: datetime
    comments: tuple[Comment, ...]


@dataclass(frozen=True, slots=True)
class HarnessSpec:
    """How to start one harness and how it confirms; `{session_id}` in the arg lists is substituted."""

    name: str
    binary: str
    args: tuple[str, ...] = ()
    session_id_args: tuple[str, ...] = ()
    resume_args: tuple[str, ...] = ()
    submit_delay_ms: int = 0
    # carriage returns sent again while a paste without its receipt still sits in the input box
    enter_retries: int = 0
    blocked_screens: tuple[str, ...] = ()  # on its screen, a dialog its hooks do not report
    receipts: ReceiptMode = ReceiptMode.NONE
    hooks: str = ""  # receipts HOOKS: the harness package whose hooks a spawn is handed (e.g. "claude")
    ready_seconds: float = 3.0  # until it must say it is ready (without receipts: stay alive)
    confirm_seconds: float = 3.0  # after a paste, until it must confirm (without receipts: stay alive)
    trust_workdir: bool = False  # record the spawn folder as trusted in the harness's user config
    # a prompt pasted during a turn waits as its own next prompt; False: it may join the running turn
    # with no prompt receipt (GitHub Copilot CLI), so a paste waits until the turn has ended
    paste_while_busy: bool = True
    # its permission hook takes an allow that adds a rule for the session (`the-loop allow always`);
    # a hook that refuses one opens its own dialog in the pane instead
    session_rules: bool = False
    # arguments so it loads none of its folder's settings, hooks, MCP servers, plugins;
    # None: it has no such start, and is never started in a folder holding a head nobody vouched for
    unvouched_args: tuple[str, ...] | None = None
    # given to every spawn (tmux -e), so a pane never runs on what the tmux server kept
    env: tuple[tuple[str, str], ...] = ()  # NAME, value; `${VAR}` in a value is the daemon's VAR
    pass_env: tuple[str, ...] = ()  # names whose values are copied from the daemon's environment

    @property
    def can_resume(self) -> bool:
        return bool(self.resume_args)

    @property
    def start_seconds(self) -> float:
        """What a new harness's own start prompt has: `readySeconds` to get ready, then
        `confirmSeconds` to confirm it."""
        return self.ready_seconds + self.confirm_seconds

    @property
    def hung_seconds(self) -> float:
        """A harness with receipts still not ready this long after its spawn — its start prompt's
        whole time, then its retry's — hung in its start rather than being slow (opencode's healthy
        starts took up to 65 s at load 26 on 2 cores, where its start prompt has 60)."""
        return 2 * self.start_seconds

    @property
    def names_its_conversations(self) -> bool:
        """It resumes by an id it chose itself (Codex): the-loop learns it from the ready receipt."""
        return self.can_resume and not any("{session_id}" in arg for arg in self.session_id_args)

    def argv(self, session_id: str, *, resume: bool, extra: tuple[str, ...] = ()) -> tuple[str, ...]:
        """The command line; `extra` (the receipt channel's arguments) goes before the session's."""
        chosen = self.resume_args if resume else self.session_id_args
        return (self.binary, *self.args, *extra, *(a.replace("{session_id}", session_id) for a in chosen))

    def environment(self, environ: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
        """`env` with each `${VAR}` taken from `environ`, then the `passEnv` names copied from it.
        Raises `MissingVariable` naming every variable `environ` lacks (never a value)."""
        missing = [f"passEnv {name}" for name in self.pass_env if name not in environ]
        for name, template in self.env:
            missing += [f"env.{name} needs ${{{var}}}" for var in env_references(template) if var not in environ]
        if missing:
            raise MissingVariable(f"harness {self.name}: {'; '.join(missing)}: not set in the daemon's environment")
        given = [(name, _REFERENCE.sub(lambda m: environ[m[1]], template)) for name, template in self.env]
        return (*given, *((name, environ[name]) for name in self.pass_env))


_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def env_references(template: str) -> list[str]:
    """The variables `${VAR}` in an `env` value names, in order."""
    return _REFERENCE.findall(template)


class ClosedBy(enum.Enum):
    """Who closed a session, and so what reopens it."""

    UPSTREAM = "upstream"  # the item closed or was merged: reopening it upstream reopens the session
    OPERATOR = "operator"  # `sessions close`: held until `sessions reopen`
    CONTROL = "control"  # a `the-loop stop` comment: held until `the-loop start`


@dataclass(frozen=True, slots=True)
class PostedRequest:
    """A request of the agent posted on its item for an answer (domain/asks.py)."""

    key: str  # its receipt's key: its hook's decision file is named by it
    number: int  # "Request N" on the item: an answer names it; given once, kept even when its post failed
    posted_at: datetime  # when its comment was posted (the-loop's clock): an answer written before saw another
    closed: bool = False  # answered (here or in the session), or its spawn is gone
    # its number is given but its comment not known to be posted (a post may fail after GitHub made
    # it): tried again with the same number; `posted_at` is when the number was given, and no answer
    # binds to it by that time
    pending: bool = False
    comment_id: str = ""  # its comment on the item, once posted: edited to say how it was answered


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """The registry entry of a work item."""

    item: WorkItemRef
    harness: str
    harness_session_id: str
    cwd: str
    status: SessionStatus = SessionStatus.ACTIVE
    recent_delivery_ids: tuple[str, ...] = ()
    pane_id: str = ""  # the harness's own pane (`%N`), so a window an operator opens is never typed into
    created_at: datetime | None = None
    updated_at: datetime | None = None
    last_event: str = ""
    version: int = 0  # of the stored row this was read from (0: never stored); saves compare-and-set on it
    spawn_id: str = ""  # marks the harness's pane in tmux and names the spawn's receipt folder
    spawned_at: datetime | None = None
    spawned_monotonic: float | None = None  # ClockPort.monotonic() at the spawn: its age survives a clock jump
    closed_by: ClosedBy | None = None
    blocked_notice: str = ""  # the episode (or dialog) whose "waiting for an answer" notice was posted
    requests: tuple[PostedRequest, ...] = ()  # the agent's requests posted on the item: the open, the last closed
    requests_made: int = 0  # the number the item's last request got: the next gets the next (never reused)
    closed_notice: str = ""  # the comment whose "closed by the operator" notice was posted in this closing
    host: str = ""  # the host whose tmux ran the latest spawn ("": one host, or before clusters)
    previous_host: str = ""  # an operator moved the item here from this host; cleared once it runs here
    naming: Naming = Naming.INJECTIVE  # LEGACY: written before slugs were injective; keeps its names
    park: Park | None = None  # its agent's turn failed on the API: nothing is pasted until the reset
    harness_group: str = ""  # the process group the latest spawn's harness leads (TmuxPort.harness_group)
    # the item's title when it was last spawned: a closed item leaves the listing that names it
    title: str = ""
    permission_mode: str = ""  # a routing rule's over its harness's own, kept for every spawn ("": its own)
    workspace: str = ""  # the `routing.workspaces` entry its folder was made by, for life ("": `routing.workspace`)
    hibernated_at: datetime | None = None  # its idle agent was ended, conversation kept: the next comment resumes it
    # the spawn whose idle agent is being ended to hibernate it, saved before its SIGTERM: a daemon that
    # dies before the hibernation is recorded leaves it said ("": none)
    hibernating: str = ""
    rss_bytes: int | None = None  # its agent's process group's resident memory at its last turn's end

    @property
    def slug(self) -> str:
        return self.item.slug_by(self.naming)

    @property
    def target(self) -> TmuxTarget:
        """Always minted from the item, never stored: no registry entry can name another session.
        A record written before names were injective keeps the name its live session has."""
        return TmuxTarget.for_slug(self.slug)

    @property
    def hibernation_begun(self) -> bool:
        """Its latest spawn's agent was being ended to hibernate, and no hibernation was recorded
        since (the daemon died, or failed, in between)."""
        return bool(self.hibernating) and self.hibernating == self.spawn_id and self.hibernated_at is None

    @property
    def held(self) -> bool:
        """Closed by someone whose close holds until they reopen it."""
        return self.status is SessionStatus.CLOSED and self.closed_by in {ClosedBy.OPERATOR, ClosedBy.CONTROL}


@dataclass(frozen=True, slots=True)
class Source:
    """One `polling.sources[]` entry, expanded to one repository."""

    provider: str
    repo: RepoRef
    label: str


@dataclass(frozen=True, slots=True)
class ReceiptChannel:
    """What a spawn passes its harness so receipts reach the-loop: environment and arguments."""

    env: tuple[tuple[str, str], ...] = ()
    args: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SpawnRequest:
    """What a spawn needs: the command line and the first prompt (never on a tmux argv), and the
    mark that proves the harness's pane. With `window`, the harness opens in a new window of the
    existing session (an operator's window lives there and is never touched)."""

    target: TmuxTarget
    argv: tuple[str, ...]
    cwd: str
    prompt: str
    mark: str = ""
    remain_on_exit: bool = False
    env: tuple[tuple[str, str], ...] = field(default=())
    window: bool = False
