"""Starting a harness: clear the name (dead panes only), spawn with the prompt on its argv and its
pane marked, resume a recorded conversation and judge the resume by the harness's own answer."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from contextlib import nullcontext, suppress
from dataclasses import dataclass, field, replace
from typing import Any

from app.usecases.delivery.watch import HarnessWatch, Verdict
from app.usecases.delivery.workspaces import EMPTY, Workspaces
from app.usecases.unit_of_work import InUnitOfWork, UnitOfWork
from domain.cluster import handover_note
from domain.errors import DuplicateSession, MissingVariable, TmuxFailed, TmuxUnanswered, TrustError, WorkspaceError
from domain.events import Event, Level
from domain.model import HarnessSpec, Probe, SessionRecord, SessionState, SessionStatus, SpawnRequest, WorkItem
from domain.policy import Clear, Decision, Outcome, clear_decision, cleared, remedy
from domain.ports import ReceiptPort, TmuxPort, TrustPort
from domain.receipts import ReceiptKind, confirms, conversation_of
from domain.routing import Route, Routing, Rule

RECENT_DELIVERIES = 20


@dataclass(frozen=True, slots=True)
class Dispatch:
    """One prompt to get into an item's harness, under a delivery id; a fresh session starts with
    `spawn_prompt` instead. `receipt` is the line a receipt must hold to confirm it."""

    item: WorkItem
    prompt: str
    spawn_prompt: str
    delivery_id: str
    receipt: str
    harness: str = ""  # a start that names its harness (`the-loop start codex`): over the routing rules


@dataclass(frozen=True, slots=True)
class Result:
    outcome: Outcome
    reason: str
    record: SessionRecord | None = None
    screen: str = ""  # the harness pane's last lines, when it never got ready
    ready: bool = False  # the harness already said it is ready (a resume waits for it)


class _Duplicate(Exception):
    """`new-session` met a held name; carries the record as saved before it."""

    def __init__(self, record: SessionRecord) -> None:
        super().__init__(str(record.target))
        self.record = record


@dataclass(frozen=True, slots=True)
class SpawnConfig:
    harnesses: Mapping[str, HarnessSpec]
    default_harness: str  # "": only the rules pick
    rules: tuple[Rule, ...] = ()
    # a harness as it starts with a permission mode over its own (None: it cannot be so started)
    variant: Callable[[str, str], HarnessSpec | None] = lambda _name, _mode: None
    startable: tuple[str, ...] = ()  # what a start may name: the harnesses routed to or defined (empty: every one)
    remain_on_exit: bool = True
    host: str = ""  # cluster: this host's id, recorded on each spawn ("": one host, nothing recorded)
    environ: Mapping[str, str] = field(default_factory=dict)  # the daemon's: `env` and `passEnv` read it
    grace_seconds: float = 5.0  # what a harness left of its process group has to end on SIGTERM

    @property
    def routing(self) -> Routing:
        """What an item's agent is: the rules, the default harness, the harnesses configured."""
        return Routing(self.rules, self.default_harness, frozenset(self.harnesses))


@dataclass(kw_only=True, eq=False)
class Spawner(InUnitOfWork):
    tmux: TmuxPort
    uow: UnitOfWork
    watch: HarnessWatch
    receipts: ReceiptPort
    trust: TrustPort
    workdir: Callable[[WorkItem, str], str]  # an item's folder in a workspace ("": the default one)
    config: SpawnConfig
    new_id: Callable[[], str] = lambda: str(uuid.uuid4())
    workspaces: Workspaces | None = None

    def harness(self, name: str) -> HarnessSpec:
        harness = self.config.harnesses.get(name) or self.config.harnesses.get(self.config.default_harness)
        if harness is None:
            raise KeyError(f"no harness named {name!r} and no default harness")
        return harness

    def spec(self, record: SessionRecord) -> HarnessSpec:
        """The record's harness as its spawns start it: with the permission mode recorded at its
        first spawn for its life (a rule changed since never widens it)."""
        if record.permission_mode:
            variant = self.config.variant(record.harness, record.permission_mode)
            if variant is not None:
                return variant
        return self.harness(record.harness)

    def first_spawn(self, job: Dispatch, spend: Callable[[], None]) -> Result:
        """A work item with no session record gets one, with the harness its start named or its
        route gives; a live occupant is never touched, and a refused or failed first spawn leaves
        no record behind."""
        target, routing = job.item.ref.target, self.config.routing
        chosen = routing.route(job.item)
        if job.harness:  # the harness it names, in the workspace its route gives (the folder is the item's)
            mode = routing.mode_for(job.item, job.harness)
            chosen = Route(job.harness, mode, workspace=chosen.workspace if chosen else "", named=True)
        if chosen is None:
            return Result(Outcome.SPAWN_REFUSED, "no routing rule covers the item and there is no default harness")
        holder = next((r.item for r in self.store.sessions() if r.target == target and r.item != job.item.ref), None)
        record = SessionRecord(
            item=job.item.ref,
            harness=self.harness(chosen.harness).name,
            harness_session_id=self.new_id(),
            cwd="",
            created_at=self.clock.now(),
            permission_mode=chosen.permission_mode,
            workspace=chosen.workspace,
        )
        if holder is not None:
            # two refs can sanitise to one name; the other item's session is never ours to take
            reason = f"{target} is recorded for another work item, {holder}"
            self._emit(
                Event.SESSION_SPAWN_FAILED,
                record,
                level=Level.ERROR,
                reason=reason,
                remedy=remedy(str(target), str(holder)),
            )
            return Result(Outcome.SPAWN_REFUSED, reason)
        probe = self.tmux.probe(target, mark="")
        spend()
        result = self._spawn(record, job, probe, resume=False, first=True, chosen_by=chosen.chosen_by)
        if result.record is not None and not result.outcome.went_in:
            self.store.drop_session(result.record)
        return result if result.outcome.went_in else replace(result, record=None)

    def respawn(self, record: SessionRecord, job: Dispatch, probe: Probe, *, resume: bool) -> Result:
        return self._spawn(record, job, probe, resume=resume, first=False)

    def fresh_conversation(self, record: SessionRecord, reason: str) -> SessionRecord:
        fresh = replace(record, harness_session_id=self.new_id())
        self._emit(
            Event.SESSION_RESUME_FAILED,
            record,
            level=Level.WARNING,
            reason=reason,
            old_session_id=record.harness_session_id,
            new_session_id=fresh.harness_session_id,
        )
        return fresh

    def _spawn(
        self, record: SessionRecord, job: Dispatch, probe: Probe, *, resume: bool, first: bool, chosen_by: str = ""
    ) -> Result:
        """Ready the folder, clear the name, spawn; after `duplicate session` re-decide once from a
        fresh probe. With worktrees, the repository's lock is held from the prepare to the spawn
        (a prune never removes the worktree in between); not while a resume is judged."""
        cwd = record.cwd or self.workdir(job.item, record.workspace)
        # awake from the record saved right before its spawn; a hibernation a crash cut short is one too
        woke = record.hibernated_at is not None or record.hibernation_begun
        record = replace(record, cwd=cwd, title=job.item.title or record.title)
        try:
            with self.workspaces.holding(job.item, record.workspace) if self.workspaces is not None else nullcontext():
                started = self._prepare_and_start(record, job, probe, resume=resume, first=first)
        except WorkspaceError as error:  # the lock not got in time
            return self._failed(record, job, f"workspace failed: {error}")
        if isinstance(started, Result):
            return started
        if resume:
            return self._judge_resume(started, job, self.harness(started.harness), woke=woke)
        return self._spawned(started, job, resumed=False, first=first, chosen_by=chosen_by, woke=woke)

    def _prepare_and_start(
        self, record: SessionRecord, job: Dispatch, probe: Probe, *, resume: bool, first: bool
    ) -> Result | SessionRecord:
        vouched = self._ready(record, job, first=first)
        if isinstance(vouched, Result):
            return vouched
        for tmux_proved_taken in (False, True):
            clear = clear_decision(probe, first=first, tmux_proved_taken=tmux_proved_taken)
            if clear.choice is Clear.REFUSE_LIVE:
                message = remedy(str(record.target), str(record.item))
                self._emit(Event.SESSION_SPAWN_FAILED, record, level=Level.ERROR, reason=clear.reason, remedy=message)
                return Result(Outcome.SPAWN_REFUSED, message, None if first else record)
            if clear.choice in {Clear.KILL_DEAD, Clear.WINDOW}:
                probe = self._clear(record)
                if probe.session is SessionState.UNKNOWN:
                    return self._failed(record, job, "tmux did not answer while clearing the name")
                if not cleared(probe).choice:
                    self._emit(
                        Event.DISPATCH_DROPPED,
                        record,
                        level=Level.WARNING,
                        delivery_id=job.delivery_id,
                        reason="session-occupied",
                    )
                    return Result(
                        Outcome.SKIPPED_OCCUPIED,
                        "a dead session holds the name and could not be cleared",
                        None if first else record,
                    )
            if not first and record.harness_group:
                self._end_leftovers(record)
            try:
                return self._start(record, job, resume=resume, window=probe.others_live, vouched=vouched)
            except _Duplicate as duplicate:
                record = duplicate.record  # as saved before the refused spawn
                probe = self.tmux.probe(record.target, mark="")
        return self._failed(record, job, "duplicate session again after one re-decision")

    def _end_leftovers(self, record: SessionRecord) -> None:
        """A harness may outlive its pane (Gemini CLI outlived `tmux kill-session`); what
        is left of the group its last spawn started is ended, so a conversation never has two agents."""
        if self.tmux.end_group(record.harness_group, grace_seconds=self.config.grace_seconds):
            self._emit(Event.SESSION_LEFTOVER_ENDED, record, level=Level.WARNING, spawn_id=record.spawn_id)

    def _ready(self, record: SessionRecord, job: Dispatch, *, first: bool) -> Decision[bool] | Result:
        """The folder made ready, and whether its head is vouched for; a failed attempt's `Result`
        when it cannot be made, or the harness cannot be started safely in it."""
        vouched = EMPTY
        try:  # a ready worktree is reused untouched; a failure is git's (or the setup's) message
            if self.workspaces is not None:
                readied = self.workspaces.prepare(
                    job.item, record.cwd, first=first, naming=record.naming, workspace=record.workspace
                )
                vouched = readied.vouched
        except WorkspaceError as error:
            return self._failed(record, job, f"workspace failed: {error}")
        if not vouched.choice and self.harness(record.harness).unvouched_args is None:
            # a harness that would load the folder's own settings never starts in it
            reason = f"{record.harness} has no start that ignores its folder's own settings (unvouchedArgs); "
            self._emit(Event.SESSION_SPAWN_FAILED, record, level=Level.ERROR, reason=reason + vouched.reason)
            return Result(Outcome.SPAWN_REFUSED, reason + vouched.reason, None if first else record)
        return vouched

    def _start(
        self, record: SessionRecord, job: Dispatch, *, resume: bool, window: bool, vouched: Decision[bool]
    ) -> Result | SessionRecord:
        """The harness started (its record), or why it did not."""
        harness = self.spec(record)
        # never the folder's own settings, hooks, MCP servers for a head nobody vouched for;
        # so started, trusting the folder (Claude Code's dialog) lets none of them run
        safe = () if vouched.choice else (harness.unvouched_args or ())
        spawn_id, previous = uuid.uuid4().hex, record.spawn_id
        cwd = record.cwd
        if resume and harness.names_its_conversations and previous:
            # Codex names its conversation; its last spawn's ready receipt said which.
            # None said: the recorded id is resumed, the harness refuses it, and a fresh one starts
            learned = conversation_of(self.receipts.read(record.item, previous))
            record = replace(record, harness_session_id=learned or record.harness_session_id)
        record = replace(
            record,
            cwd=cwd,
            spawn_id=spawn_id,
            pane_id="",
            harness_group="",  # the last spawn's was ended before this one (`_end_leftovers`)
            spawned_at=self.clock.now(),
            spawned_monotonic=self.clock.monotonic(),
            status=SessionStatus.ACTIVE,
            closed_by=None,
            # awake once tmux runs it: a crash before its resume is judged leaves an agent that holds
            # its slot and is looked at for hibernation again
            hibernated_at=None,
            hibernating="",
        )
        try:  # the reason names the variables, never a value
            env = harness.environment(self.config.environ)
        except MissingVariable as error:
            return self._failed(record, job, f"cannot start the harness: {error}")
        try:
            channel = self.receipts.prepare(record.item, spawn_id, mode=harness.receipts, hooks=harness.hooks)
            if harness.trust_workdir and self.trust.trust(cwd, hooks=harness.hooks):
                self._emit(Event.SESSION_TRUSTED, record, directory=cwd)
        except (OSError, TrustError) as error:
            return self._failed(record, job, f"cannot prepare the harness: {error}")
        # recorded before tmux starts it: after a crash right after the spawn, the next comment
        # finds the harness by its mark instead of meeting a live stranger, and a retry of this
        # one knows it rides on the argv (its receipt may come seconds later)
        recent = tuple(dict.fromkeys((*record.recent_delivery_ids, job.delivery_id)))[-RECENT_DELIVERIES:]
        record = self.store.save_session(replace(record, recent_delivery_ids=recent))
        request = SpawnRequest(
            target=record.target,
            argv=harness.argv(record.harness_session_id, resume=resume, extra=(*safe, *channel.args)),
            cwd=cwd,
            prompt=job.prompt if resume else self._handover(record) + job.spawn_prompt,
            mark=spawn_id,
            remain_on_exit=self.config.remain_on_exit,
            env=(*env, *channel.env),  # the receipt channel's own variables last: they win
            window=window,
        )
        try:
            # the host is recorded once its tmux runs the harness: until then a retry still knows
            # the conversation before it ran elsewhere
            pane = self.tmux.spawn(request)
            group = self.tmux.harness_group(record.target, pane=pane, mark=spawn_id)
            record = replace(record, pane_id=pane, harness_group=group, host=self.config.host or record.host)
            # saved at once: a crash while its resume is judged (seconds) still leaves a successor
            # what to end (bench.chaos --harness opencode: one lived on after SIGHUP and took a comment)
            record = self.store.save_session(record)
        except DuplicateSession as error:
            raise _Duplicate(record) from error
        except (TmuxFailed, TmuxUnanswered, ValueError) as error:
            return self._failed(record, job, f"spawn failed: {error}")
        # the spawn before keeps its receipts: a comment pasted there and not yet recorded (a crash)
        # is still found confirmed before anything pastes it again
        self.receipts.forget(record.item, keep=(spawn_id, previous))
        return record

    def _handover(self, record: SessionRecord) -> str:
        """Cluster: a fresh conversation after one that ran on another host is told so."""
        if record.host not in {"", self.config.host}:
            return handover_note(record.host, lost=True)
        return handover_note(record.previous_host, lost=False) if record.previous_host else ""

    def _judge_resume(self, record: SessionRecord, job: Dispatch, harness: HarnessSpec, *, woke: bool) -> Result:
        """A resume counts once the harness says it is ready, or took the prompt (it may die right
        after), or while it still runs; one that died before it said so gets a fresh conversation,
        within the same attempt (the resumed pane, if it still runs, is ended first: it is ours)."""
        watched = self.watch.wait_ready(record, harness, paste_follows=False)  # its prompt is on its argv
        if watched.verdict in {Verdict.YES, Verdict.BLOCKED}:  # running: a dialog is not a failed resume
            ready = watched.verdict is Verdict.YES
            return self._spawned(record, job, resumed=True, first=False, ready=ready, woke=woke)
        if watched.verdict is Verdict.TIMEOUT:
            # still running, not ready within its readySeconds: slow, not failed (bench.chaos --harness
            # opencode on a loaded machine: two resumes at once, SIGKILLed live and replaced by fresh
            # conversations). Its prompt's confirmation waits the start's whole time, as a new start's
            # does; one silent past its hungSeconds is ended and started again (Dispatcher.hung)
            return self._spawned(record, job, resumed=True, first=False, ready=False, woke=woke)
        said = self.watch.receipts(record)
        if confirms(said, job.receipt) or any(r.kind is ReceiptKind.READY for r in said):
            # it took the prompt, or said it was ready, then died: its conversation was found and may
            # hold the prompt — a hook SIGKILLed with its harness writes its receipt a moment after the
            # pane is seen dead (bench.chaos --harness codex). The confirmation wait and a retry look
            # for that receipt; a fresh conversation would get the prompt a second time. A resume
            # refused (an unknown id) exits before it says it is ready, with every agent run here.
            return self._spawned(record, job, resumed=True, first=False, ready=True, woke=woke)
        if watched.verdict is Verdict.DEAD and self.config.remain_on_exit and self._vanished(record):
            # seen under bench.chaos --harness codex: its session went whole — its tmux server or
            # session killed from outside. A harness refusing the resume leaves its dead pane: this
            # says nothing of the conversation, which is resumed again next attempt, never replaced
            return self._failed(record, job, "the resumed harness's session vanished before it said it was ready")
        if watched.screen:
            self._emit(
                Event.SESSION_NOT_READY, record, level=Level.WARNING, reason=watched.reason, screen=watched.screen
            )
        self.tmux.terminate_harness(record.target, grace_seconds=0, pane=record.pane_id, mark=record.spawn_id)
        fresh = self.fresh_conversation(record, f"resume {watched.verdict.value}: {watched.reason}")
        probe = self.tmux.probe(record.target, mark="")
        return self._spawn(fresh, job, probe, resume=False, first=False)

    def _vanished(self, record: SessionRecord) -> bool:
        return self.tmux.probe(record.target, mark=record.spawn_id, pane=record.pane_id).harness is SessionState.ABSENT

    def _spawned(
        self,
        record: SessionRecord,
        job: Dispatch,
        *,
        resumed: bool,
        first: bool,
        ready: bool = False,
        chosen_by: str = "",
        woke: bool = False,
    ) -> Result:
        record = replace(
            record,
            recent_delivery_ids=tuple(dict.fromkeys((*record.recent_delivery_ids, job.delivery_id)))[
                -RECENT_DELIVERIES:
            ],
            updated_at=self.clock.now(),
            last_event=(Event.SESSION_SPAWNED if first else Event.SESSION_RESPAWNED).value,
            previous_host="",  # it runs here now
        )
        chosen: dict[str, Any] = {"chosen_by": chosen_by} if chosen_by else {}  # a first spawn: what chose it
        if woke:  # woken by a comment: a hibernation, never a death
            chosen["woke_from"] = "hibernation"
        self._emit(
            Event.SESSION_SPAWNED if first else Event.SESSION_RESPAWNED,
            record,
            harness=record.harness,
            harness_session_id=record.harness_session_id,
            resumed=resumed,
            delivery_id=job.delivery_id,
            pane=record.pane_id,
            **chosen,
        )
        why = "resumed the recorded conversation" if resumed else "fresh session"
        return Result(Outcome.SPAWNED, why, record, ready=ready)

    def _clear(self, record: SessionRecord) -> Probe:
        with suppress(TmuxFailed, TmuxUnanswered):  # what is left is what the probe says
            self.tmux.clear_dead(record.target)
        return self.tmux.probe(record.target, mark="")

    def _failed(self, record: SessionRecord, job: Dispatch, reason: str) -> Result:
        self._emit(Event.SESSION_SPAWN_FAILED, record, level=Level.ERROR, reason=reason, delivery_id=job.delivery_id)
        return Result(Outcome.RETRY, reason, record)

    def _emit(self, event: Event, record: SessionRecord, *, level: Level = Level.INFO, **fields: Any) -> None:
        self.events.emit(event, level=level, work_item=str(record.item), target=str(record.target), **fields)
