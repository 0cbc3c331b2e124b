"""The event catalog: every event the-loop writes to its log, with its meaning."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any


class Level(enum.Enum):
    DEBUG = "debug"
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


# fields a person reads on the fleet page and no command prints (`events`, `why`): a comment's own
# words, which an agent reading a command's output would otherwise take in unfenced
PAGE_ONLY_FIELDS = frozenset({"excerpt"})


def for_commands(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record as a command shows it: without the fields only the page shows."""
    return {k: v for k, v in record.items() if k not in PAGE_ONLY_FIELDS}


class Event(enum.Enum):
    """An event name and what it means; the log's `event` field is the value."""

    def __new__(cls, name: str, meaning: str) -> Event:
        member = object.__new__(cls)
        member._value_ = name
        member.meaning = meaning
        return member

    meaning: str

    @classmethod
    def named(cls, name: object) -> Event | None:
        """The event a log record's `event` field names; None for one this catalog does not hold (a log
        written by another version, a broken record)."""
        found = cls._value2member_map_.get(name) if isinstance(name, str) else None
        return found if isinstance(found, cls) else None

    DISPATCH_QUEUED = (
        "dispatch.queued",
        "A comment became a prompt and was queued for its work item (`author`, `excerpt`: its first words, "
        "redacted and sanitized, for the page only; `url`).",
    )
    DISPATCH_SUCCEEDED = (
        "dispatch.succeeded",
        "A comment was delivered: the harness confirmed it (`confirmed_by`), and the ledger resolved it.",
    )
    DISPATCH_PASTED = (
        "dispatch.pasted",
        "A prompt went into the harness (`outcome`: pasted, or spawned with it on the argv); the harness has "
        "yet to confirm it.",
    )
    DISPATCH_CONFIRMED = (
        "dispatch.confirmed",
        "The harness confirmed a delivery: `confirmed_by` is `receipt` (a receipt names it), `alive` (a harness "
        "without receipts still ran `confirmSeconds` later), `receipt-on-retry` (found before pasting again) or "
        "`alive-on-retry` (without receipts: pasted before the daemon stopped, and the harness still runs).",
    )
    DISPATCH_UNCONFIRMED = (
        "dispatch.unconfirmed",
        "The harness never confirmed a delivery in time, or died first (`screen`: its pane's last lines); the "
        "attempt failed.",
    )
    DISPATCH_FAILED = (
        "dispatch.failed",
        "A delivery attempt failed; `will_retry` says if the comment is retried next cycle.",
    )
    DISPATCH_DROPPED = (
        "dispatch.dropped",
        "A comment was resolved without delivery (`reason`, e.g. session-occupied; a held one — "
        "session-stopped, session-closed — names its `author` and the `rule`: the-loop stop, sessions close); "
        "never retried.",
    )
    SESSION_SPAWNED = (
        "session.spawned",
        "A new tmux session was started for a work item (fresh conversation); `chosen_by` says what gave it its "
        "harness: `routing.rules[i]`, `routing.defaultHarness`, or `a start naming it`.",
    )
    SESSION_HARNESS_CHANGED = (
        "session.harness_changed",
        "A start naming a harness (`by`: `control`, a `the-loop start <harness>` comment, or `operator`, `sessions "
        "start --harness`) gave the item another harness (`harness`, `was`): the earlier one was ended, and the "
        "named one starts in a fresh conversation.",
    )
    SESSION_START_REQUESTED = (
        "session.start_requested",
        "An operator asked for the item's agent to start (`sessions start`; `harness`: the one named, if any); "
        "the daemon starts it at its next look at the item.",
    )
    SESSION_HARNESS_CHANGE_FAILED = (
        "session.harness_change_failed",
        "A start naming another harness (`harness`) found the item's running one (`was`) not ended (`reason`: tmux "
        "did not answer, or its pane still runs): nothing changed, and the start is tried again next cycle.",
    )
    ROUTING_UNMATCHED = (
        "routing.unmatched",
        "No routing rule covers a work item that would get a session, and there is no default harness: its "
        "comments wait (told once on the item) until `the-loop start <harness>` or a rule covers it.",
    )
    SESSION_HARNESS_UNCONFIGURED = (
        "session.harness_unconfigured",
        "The harness an item's session record names (`harness`) is in the configuration no more: its agent is "
        "neither started nor written to, and its comments wait (told once on the item) until `the-loop start "
        "<harness>` gives it another or the harness is defined again.",
    )
    SESSION_SPAWN_FAILED = (
        "session.spawn_failed",
        "A spawn was refused or failed; `remedy` names what the operator can do.",
    )
    SESSION_RESPAWNED = (
        "session.respawned",
        "A dead or absent session was started again (`resumed` says if the conversation was resumed; "
        "`woke_from: hibernation` when its agent had been hibernated).",
    )
    SESSION_HIBERNATING = (
        "session.hibernating",
        "An agent found idle is being ended to hibernate its item (`spawn_id`, `target`): said, and marked on "
        "its record, before its harness is sent SIGTERM, so a daemon that dies before `session.hibernated` still "
        "leaves in the log who ended it, and its next run takes the agent, once its pane is dead, as hibernated.",
    )
    SESSION_HIBERNATED = (
        "session.hibernated",
        "An agent idle for `routing.hibernateAfterSeconds` (`idle_seconds`) was ended to free its slot, its "
        "conversation (`harness_session_id`) kept: the item's next comment resumes it. Its dead pane is removed, "
        "and its tmux session with it unless an operator's window runs there. `cut_short`: the daemon died "
        "between ending it and recording this; its next run recorded it.",
    )
    SESSION_WOKEN_ELSEWHERE = (
        "session.woken_elsewhere",
        "A hibernated item's next comment came while the host its agent ran on (`host`), which keeps its "
        "conversation (`harness_session_id`), is gone (its heartbeat expired): this host took it and starts it in "
        "a fresh conversation, told of the earlier one; the item is told once. While that host is up, the item "
        "waits for it instead.",
    )
    SESSION_RESPAWN_AVERTED = (
        "session.respawn_averted",
        "The respawn path found the session live and delivered into it instead.",
    )
    SESSION_RESUME_FAILED = (
        "session.resume_failed",
        "Resuming the recorded conversation failed or is unsupported; a fresh one was started.",
    )
    SESSION_READY = (
        "session.ready",
        "A harness said it is ready (`source`: startup or resume); comments are pasted only into a ready harness.",
    )
    SESSION_NOT_READY = (
        "session.not_ready",
        "A harness did not say it was ready in time (`screen`: its pane's last lines — a trust dialog, a login). "
        "Still not ready twice `readySeconds` + `confirmSeconds` after its spawn, it hung in its start: it is "
        "ended and started again (`spawn_id`: the hung spawn).",
    )
    SESSION_BLOCKED = (
        "session.blocked",
        "The agent waits for an answer to a dialog in its session (a permission prompt); comments wait, no "
        "attempt is spent, one notice is posted on the item per episode (one turn's dialogs). `waiting_on`: "
        "permission, question or dialog; `since`: when it began.",
    )
    SESSION_ASKED = (
        "session.asked",
        "The agent asks for a permission (`tool`) or asks a question (`kind`), and its hook waits for an answer "
        "from the item: one comment posted with the request's number on the item (`request`), the request "
        "fenced, and how to answer it. Each request open is posted, several at once when one message asks for "
        "several tools.",
    )
    SESSION_ANSWERED = (
        "session.answered",
        "An authorized `the-loop allow`/`deny`/`answer` comment (`comment_id`, by `author`), or a button on the "
        "fleet page (`source`: page), answered the agent's request number `request` (`answer`); its hook took the "
        "decision (`waited_seconds` since the request), and the request's comment is edited to say how, by whom, "
        "from where and when.",
    )
    SESSION_ANSWER_UNUSED = (
        "session.answer_unused",
        "An answer comment answered nothing (`why`: no-such-request — its number names no open request; "
        "several-open — no number while more than one is open; another-recent — no number while another "
        "request was posted within the hook's wait before it; written-before — written before the request was "
        "posted; already-answered; too-late; no-request; does-not-fit); the reply says why in the-loop's own "
        "words and names the requests open. From the fleet page (`source`: page) the page says why, not the item.",
    )
    SESSION_ANSWERED_IN_PANE = (
        "session.answered_in_pane",
        "A request posted on the item (`request`) was answered in the agent's session (someone attached) or its "
        "hook's wait ended; the item is told once.",
    )
    SESSION_PARKED = (
        "session.parked",
        "The agent's turn failed on the API (`cause`: rate_limit, server_error, authentication_failed, …) "
        "at `since`: the comment got the failure reaction and the item is parked `until` (none: until an "
        "operator resumes it), counted from `since` by `rule`: named_reset (the reset the error named), "
        "default_wait (no reset named: the cause's default wait), doubled (failed again right after a "
        "resume), longest_wait (cut to 6 h), operator; nothing is pasted and no attempt is spent meanwhile; "
        "one notice per episode, which says the same cause and rule.",
    )
    SESSION_UNPARKED = (
        "session.unparked",
        "A parked item's reset came (`by`: reset, or resume for `the-loop resume`): its agent is given one "
        "prompt with the comments whose turns failed, then the held comments follow; once that prompt is "
        "in, the park's notice is edited to say when and by what the park ended.",
    )
    SESSION_TURN_FINISHED = (
        "session.turn_finished",
        "The agent's turn for a delivered comment ended (`failed` when it ended in an error) — or the turn of a "
        "prompt of the-loop's own, an item's start or a resume (`comment_id` null, its `delivery_id` alone) — with "
        "its agent's "
        "memory then (`rss_mib`) and what the turn cost as the agent's own records say it (its transcript, rollout, "
        "session record or store): `tokens_in` (input "
        "neither written to nor read from the prompt cache), `tokens_out`, `cache_write`, `cache_read` and the "
        "`model`, and `usd_estimated` at the price table's prices (absent: the model has no price); or `usage: "
        "unknown` and why (`usage_reason`: not written whole yet, a record of a shape not pinned, a harness with "
        "no reader); or `usage: joined` for a comment typed while its agent worked that joined the running turn: "
        "the turn's cost is said once, with the delivery whose prompt started it (`joined_delivery`; null for a "
        "prompt the-loop did not give).",
    )
    BUDGET_WARNED = (
        "budget.warned",
        "What a budget covers (`budget`, `subject`, `period`) has spent 80% of its allowance (`spent_usd`, "
        "`allowed_usd`, `spent_tokens`, `allowed_tokens`): the item (`work_item`) whose turn got it there is told "
        "once.",
    )
    BUDGET_REACHED = (
        "budget.reached",
        "A budget's allowance is spent for what it covers (`budget`, `subject`, `period`): comments it covers "
        "wait, none is pasted, until it is raised (`the-loop budget raise`) or its next period; a turn under way "
        "goes on. Said once an item, with a notice on it.",
    )
    SESSION_LEFTOVER_ENDED = (
        "session.leftover_ended",
        "Before a respawn, processes its harness's last spawn left running after its pane had gone (a harness "
        "that outlives `tmux kill-session`) were ended: SIGTERM, then SIGKILL (`spawn_id`: that spawn).",
    )
    SESSION_TRUSTED = (
        "session.trusted",
        "The spawn folder was recorded as trusted in Claude Code's user configuration (`directory`).",
    )
    SESSION_CLOSED = (
        "session.closed",
        "The session record is closed: `closed_by` upstream (the item closed or merged; reopening it upstream "
        "reopens the session), operator (`sessions close`: held until `sessions reopen`) or control (a "
        "`the-loop stop` comment: held until `the-loop start`).",
    )
    SESSION_REOPENED = (
        "session.reopened",
        "The operator reopened a closed session (`sessions reopen`): comments are delivered to it again.",
    )
    SESSION_RETAINED = (
        "session.retained",
        "The work item left the watched list while open; its session is kept and paused.",
    )
    DELIVERY_PAUSED = (
        "delivery.paused",
        "Comments to the work item wait, as after `the-loop pause`, set by hand (`source`: page).",
    )
    DELIVERY_RESUMED = (
        "delivery.resumed",
        "Comments to the work item are delivered again, as after `the-loop resume`, set by hand (`source`: page).",
    )
    SESSION_RESET = ("session.reset", "The operator reset a work item: harness ended, record and ledger forgotten.")
    CONTROL_EXECUTED = (
        "control.executed",
        "A control comment was executed (`verb`: pause, resume, stop, start, status, allow, deny, answer; "
        "`author`, `excerpt` and `url` as for dispatch.queued); it is never delivered.",
    )
    CONTROL_UNKNOWN = (
        "control.unknown",
        "A control comment named a command the-loop does not know, or was not written as one (`@the-loop: pause`, "
        "`the-loop pause.`); it is not delivered, and one reply says how to write a command.",
    )
    CONTROL_IGNORED = (
        "control.ignored",
        "A control comment by someone not authorized was ignored (no reaction, no reply); `author` wrote it, "
        "`rule` is the setting that refused them and `standing` why, as for poll.comment_unauthorized. Said once "
        "per comment.",
    )
    AUTHORIZE_PERMISSION_READ = (
        "authorize.permission_read",
        "The GitHub permission of `login` on `repo` was read for a comment of `work_item` (`permission`: none, read, "
        "triage, write, maintain or admin), as routing.authorize.permission needs it; kept in memory for "
        "routing.authorize.cacheSeconds.",
    )
    AUTHORIZE_LOOKUP_FAILED = (
        "authorize.lookup_failed",
        "The GitHub permission of `login` on `repo` could not be read (`reason`: an error, a 403 for a token without "
        "push access): nothing is guessed, so their comments on `work_item` read now are not authorized (each said "
        "by poll.comment_unauthorized or control.ignored with `standing: unknown`). It is asked again next time.",
    )
    AUTHORIZE_FORGOTTEN = (
        "authorize.cache_dropped",
        "A webhook delivery said access changed (`github_event`: member, membership, organization or team): the "
        "permissions kept for `repo` (empty: every repository) were dropped (`permissions`: how many), to be read "
        "again when next needed.",
    )
    CONTROL_REFUSED = (
        "control.refused",
        "`the-loop start` was not done (`reason`): it met a session an operator closed (only `sessions reopen` "
        "undoes that), it named no configured harness, it named none for an item that has no agent (no rule "
        "covers it, no default harness), or the running harness could not be ended.",
    )
    POLL_NOT_FOR_AGENT = (
        "poll.not_for_agent",
        "With routing.trigger set, an authorized comment without it was resolved as not for the agent.",
    )
    POLL_CYCLE = ("poll.cycle", "One poll cycle finished; fields summarise it.")
    POLL_COMMENT_FORWARDED = ("poll.comment_forwarded", "A comment was delivered and resolved in the ledger.")
    POLL_COMMENT_FAILED = (
        "poll.comment_failed",
        "A comment spent its retry budget and was abandoned (`will_retry: false`).",
    )
    POLL_COMMENT_HISTORY = (
        "poll.comment_history",
        "A comment pushed by a webhook, or kept for an item not listed yet, was written before its item "
        "was armed (`armed_at`): history, not a prompt — nothing is delivered.",
    )
    POLL_INBOX_PRUNED = (
        "poll.inbox_pruned",
        "Kept comments of an item were dropped from the inbox unread (`comments`: how many): the item left the "
        "listing (what was kept goes with it), or no read listed it within `webhooks.ghWebhook.unlistedKeepSeconds` "
        "(when it is listed, its arming read brings every comment since its label).",
    )
    POLL_LEDGER_PRUNED = (
        "poll.ledger_pruned",
        "Resolved comment ids of an item that the newness rule no longer needs were dropped from its ledger "
        "(`comments`: how many): each was written before the ledger's new `horizon`, so it is history to every "
        "ingress and can never be delivered again.",
    )
    POLL_COMMENT_EDITED_BY_OTHER = (
        "poll.comment_edited_by_other",
        "A comment by an authorized `author` was edited, before the-loop first read it, by `editor` — "
        "not authorized, or not known: its text is not its author's, so it is skipped, not delivered.",
    )
    POLL_COMMENT_UNAUTHORIZED = (
        "poll.comment_unauthorized",
        "A new comment by `author`, not authorized, is not a prompt: resolved as skipped, said once per comment. "
        "`rule` is the setting that refused them and `standing` why: `not-listed` (routing.authorizedUsers, on its "
        "item's host: a typo in the list shows here), `denied` (routing.authorize.deny), `below` or `unknown` "
        "(routing.authorize.permission: their permission on the item's repository is less, or could not be read).",
    )
    COMMENT_HELD = (
        "comment.held",
        "A comment waits, not delivered yet, because its item is paused (`rule`: the-loop pause; `author` "
        "wrote the comment, `excerpt` and `url` as for dispatch.queued); it goes right after `the-loop resume`. "
        "Said once per comment.",
    )
    POLL_COMMENT_OURS = (
        "poll.comment_ours",
        "A comment of the-loop's own or of its agent was read — never a prompt (debug; `author` says whose "
        "login posted it; `rule`: login, posted by the GitHub App's bot the-loop writes as, or marker, "
        "carrying the agent marker in its text, not in code or a quote).",
    )
    POLL_REARMED = ("poll.rearmed", "Comments abandoned by a different version got one fresh retry budget.")
    POLL_BASELINED = (
        "poll.baselined",
        "First sight of a work item: its existing comments were baselined, not delivered.",
    )
    POLL_SOURCE_FAILED = (
        "poll.source_failed",
        "A repository could not be read this cycle (`cause`); other repositories carried on.",
    )
    POLL_ITEM_FAILED = (
        "poll.item_failed",
        "Working one item raised an unexpected error (`cause`); the cycle carried on and the item is "
        "worked again next cycle.",
    )
    POLL_ITEM_CONFLICT = (
        "poll.item_conflict",
        "Someone else (an operator's `sessions reset` or `close`) changed the item's ledger or session "
        "record while it was worked: the stale write was refused (`cause`), and the item is worked again "
        "next cycle from what is stored.",
    )
    POLL_BACKOFF = (
        "poll.backoff",
        "A repository is rate limited, or the budget its reads count against (its App installation's) is"
        " down to `integrations.github.rateFloor`; it is not read until `until`.",
    )
    POLL_GIVEUP_REPORTED = (
        "poll.giveup_reported",
        "The notice for an abandoned or skipped comment was posted on the item.",
    )
    POLL_GIVEUP_REPORT_FAILED = ("poll.giveup_report_failed", "Posting that notice failed; the ledger is unchanged.")
    NOTICE_POSTED = ("notice.posted", "A notice (`notice`: blocked, closed, start-failed, …) was posted on the item.")
    NOTICE_EDITED = (
        "notice.edited",
        "A notice the-loop posted was brought up to date in place (`notice`: unparked — the park it told of ended).",
    )
    NOTICE_FAILED = ("notice.failed", "Posting (or editing) a notice failed; nothing else changed.")
    REACTION_ADDED = ("reaction.added", "A reaction was added to a comment.")
    REACTION_FAILED = ("reaction.failed", "Adding a reaction failed; nothing else changed.")
    WEBHOOK_RECEIVED = (
        "webhook.received",
        "A signed webhook delivery announced a new comment that can become a prompt, and it was kept in the "
        "inbox (`reason`: `listed` at the last read, or `labelled` and not listed yet); the poller works it "
        "at once, through the ledger, under the same delivery id as by polling.",
    )
    WEBHOOK_DROPPED = (
        "webhook.dropped",
        "Signed deliveries answered and dropped (`reason`: unwatched, other-host, installation-unwatched — the GitHub "
        "App's delivery came through an installation that does not serve its repository, or one deleted —, "
        "repository-removed — taken from that installation since —, ours, unauthorized, not-listed, inbox-full); "
        "said at most once a minute per reason, `count` the drops since it was last said.",
    )
    WEBHOOK_INSTALLATION_CHANGED = (
        "webhook.installation_changed",
        "The GitHub App's webhook said its `installation` changed (`action`: created, deleted, suspend, unsuspend, "
        "new_permissions_accepted, added, removed): the repositories in `added` are now served by it, those in "
        "`removed` are not (their next call looks their installation up again, and a delivery for one through it "
        "is dropped, repository-removed); a deleted installation serves none. `token_dropped`: the token held for "
        "it was dropped (deleted, suspended, new permissions), its next call asks for a new one.",
    )
    WEBHOOK_REFUSED = (
        "webhook.refused",
        "Requests to the webhook receiver were refused (`reason`: bad-signature — unsigned or signed with another "
        "secret —, malformed, too-large, timeout, …; `status`: the HTTP answer); said at most once a minute per "
        "reason, `count` the refusals since it was last said.",
    )
    WORKSPACE_READY = (
        "workspace.ready",
        "A work item's git worktree was made and is ready before its spawn (`branch`, `start`, `seconds`).",
    )
    WORKSPACE_SETUP_RAN = (
        "workspace.setup_ran",
        "The setup command ran once in a new worktree (`exit_status`, `output_tail`: its last bytes, "
        "control characters made visible); a failure discards the worktree and fails the attempt.",
    )
    WORKSPACE_SETUP_SKIPPED = (
        "workspace.setup_skipped",
        "The setup command was not run in a new worktree: it holds a fork's head nobody vouched for, whose "
        "code never runs on the host (`reason`, with how to vouch: docs/workspaces.md).",
    )
    WORKSPACE_VOUCHED = (
        "workspace.vouched",
        "An operator vouched for a pull request's head (`sessions vouch`): `head` of `head_repo` may run on the "
        "host (setup, the harness's folder settings); a later push is not covered.",
    )
    WORKSPACE_REMADE = (
        "workspace.remade",
        "A fork's worktree was made again from the head the operator vouched for before its harness started "
        "with its folder's settings: it held an earlier head or files no vouch covers, and nothing in it would "
        "be lost (`reason`; docs/workspaces.md).",
    )
    WORKSPACE_UNVOUCHED = (
        "workspace.unvouched",
        "A fork's harness starts without its folder's settings though the operator vouched for the head: its "
        "worktree holds an earlier head or files no vouch covers, and making it again would lose work (`reason`, "
        "naming what is in the way; docs/workspaces.md).",
    )
    WORKSPACE_FAILED = (
        "workspace.failed",
        "A worktree could not be made or removed (`cause`: git's own message, or the setup's); nothing "
        "half-made is left as if ready, and the attempt counts as failed.",
    )
    WORKSPACE_REMOVED = (
        "workspace.removed",
        "A clean worktree and its branch were removed (`by`: close or prune; `bytes_freed`).",
    )
    WORKSPACE_KEPT = (
        "workspace.kept",
        "A worktree was kept on close or prune (`reason`: uncommitted change, untracked file, commit "
        "missing from every remote branch, or a session that may be live).",
    )
    CLUSTER_JOINED = (
        "cluster.joined",
        "This host joined the hosts sharing the work (`host`); its heartbeat renews its leases every "
        "`renew_every_seconds`.",
    )
    CLUSTER_LEFT = ("cluster.left", "This host stopped cleanly; its leases run out unless it starts again in time.")
    CLUSTER_READING = (
        "cluster.reading",
        "This host took a repository's lock (`repo`): it reads that repository's listing and comments for "
        "every host now.",
    )
    CLUSTER_LEASE_PLACED = (
        "cluster.lease_placed",
        "A work item got a slot: given to the host with the most free slots (`host`; a host alone: itself) — for a "
        "new agent, one whose own memory admits it; a hibernated item, its agent's host while that host is up — the "
        "item waiting longest first: `how` placed (a new item) or taken-over (its lease on `previous` expired: a "
        "lost host).",
    )
    CLUSTER_MEMORY_LOW = (
        "cluster.memory_low",
        "This host's available memory (`available_mib`: `MemAvailable`) is below `cluster.minFreeMemoryMiB` "
        "(`min_free_mib`) while items wait for an agent here (`waiting`: how many): none of them starts or resumes "
        "until it is back; the agent resting longest was hibernated to make room when one could be (`hibernated`: "
        "its item, else null). Said once a shortage, when the first item waits; again only after the memory was "
        "back above the floor.",
    )
    CLUSTER_START_HELD = (
        "cluster.start_held",
        "A new agent was about to start on this host for an item it holds (`work_item`: its first spawn, or a "
        "hibernated agent's resume), and this host's own available memory, read right then (`available_mib`), is "
        "below `cluster.minFreeMemoryMiB` (`min_free_mib`) — the placement having found room by a reading before "
        "it (another host's by this host's last heartbeat) — even after the agent resting longest was hibernated "
        "to make room when one could be (`hibernated`: its item, else null). Nothing of it started, its comments "
        "stay undelivered, kept; its slot is given back, this host's heartbeat saying the shortage first, so the "
        "next placement gives it to a host whose memory admits it, or it waits (`cluster.slot_waiting`, `why: "
        "memory`). Agents already running, and deliveries into them, are never held by it.",
    )
    CLUSTER_SLOT_WAITING = (
        "cluster.slot_waiting",
        "A listed work item that needs an agent got no slot: every live host (a host alone: itself) holds "
        "`cluster.maxSessions` items (`hosts`: each one's sessions/max; `why: memory` when a host with a free slot "
        "has its free memory below `cluster.minFreeMemoryMiB`; `home`: a hibernated item's host, which holds its "
        "conversation and alone may wake it while it is up, full though another host has room). Its comments wait, "
        "kept; `status` and `sessions list` show it and `since`; a notice is posted on the item once the wait "
        "outlasts a cycle. Said once per wait.",
    )
    CLUSTER_LEASE_LOST = (
        "cluster.lease_lost",
        "This host stopped working an item it no longer holds (`cause`): another host took it, or its last "
        "renewal is past the deadline; no tmux action was taken.",
    )
    CLUSTER_ORPHAN_ENDED = (
        "cluster.orphan_ended",
        "This host ended its own tmux session of an item another host holds now (`ended`; false: tmux "
        "refused, tried again next cycle).",
    )
    CLUSTER_AGENT_ENDED = (
        "cluster.agent_ended",
        "This host's watchdog ended an agent (`target`, `pane`; `killed`: it outlived SIGTERM's grace): the "
        "deadline its last lease renewal set passed `late_seconds` ago unrenewed (the daemon down, paused or "
        "cut off), and its lease may soon pass to another host; or a watchdog replaced by one of a daemon "
        "watching another tmux server ended its own server's agents. `source` daemon: the daemon ended it "
        "itself, no watchdog guarding it (`reason`). `ended` false: tmux did not answer (`cause`).",
    )
    CLUSTER_WATCHDOG_UNARMED = (
        "cluster.watchdog_unarmed",
        "This host's agent watchdog does not guard its agents' deadline (`cause`: the deadline could not be "
        "recorded, or the watchdog is gone and could not be started again). Until an arm succeeds — tried "
        "again after a wait doubling up to the renewal interval — this host acts on none of its items and "
        "ends its agents itself. Logged once per spell.",
    )
    CLUSTER_WATCHDOG_ARMED = (
        "cluster.watchdog_armed",
        "This host's agent watchdog guards its agents' deadline again after `unarmed_seconds` (`tries` "
        "failed arms); the host acts on its items again.",
    )
    CLUSTER_RENEW_FAILED = (
        "cluster.renew_failed",
        "A lease renewal failed (`cause`); past the renew deadline this host acts on none of its items until "
        "one succeeds. Logged once per outage.",
    )
    CLUSTER_RENEWED = (
        "cluster.renewed",
        "A renewal succeeded again after failures (`failed_for_seconds`); `lost` lists the items other hosts "
        "took meanwhile.",
    )
    SESSION_MOVED = (
        "session.moved",
        "The operator moved an item to another host (`sessions move`): its session here ended, and `to` starts "
        "it, resuming the conversation where the harness can, else fresh.",
    )
    RECEIPTS_LOOK_FAILED = (
        "receipts.look_failed",
        "A look the daemon takes at the receipts beside the cycle (`look`: `asks`, what the agents ask; "
        "`turn-ends`, their turns that ended) failed (`cause`: the error, never a comment's words); the other "
        "looks go on, and this one is taken again at its next interval. Said once for a fault that repeats, "
        "until the look succeeds again.",
    )
    STORE_UNREACHABLE = (
        "store.unreachable",
        "The state store's database could not be reached (`cause`): no delivery is counted, sessions keep "
        "running, the cycle is retried after `retry_seconds` (doubling up to the cap).",
    )
    STORE_REACHABLE = ("store.reachable", "The state store's database answers again (`unreachable_seconds`).")
    POLLER_STARTED = ("poller.started", "The poller started and holds the state root's lock.")
    STATE_PERMISSIONS_TIGHTENED = (
        "state.permissions_tightened",
        "At start, a file or folder of the state root (or the event log) was open to other local users "
        "(left by an earlier version, or made under another umask); it is now 0600 or 0700. "
        "Fields: `path`, `mode_before`.",
    )
    POLLER_STOPPED = ("poller.stopped", "The poller stopped cleanly.")
    POLLER_FAILED = (
        "poller.failed",
        "The poller stopped on an error it cannot carry on from (`cause`: its lock file cannot be opened or "
        "written — a read-only state folder —, `poll --once` whose cycle or heartbeat failed, an error outside any "
        "cycle); it exits 1 and a service manager restarts it. A daemon's failed cycle is `poller.cycle_failed`, "
        "and it carries on.",
    )
    POLLER_BLOCKED = ("poller.blocked", "Another poller holds the state root's lock; this one exited.")
    POLLER_CYCLE_FAILED = (
        "poller.cycle_failed",
        "A cycle, or the heartbeat after it, failed (`cause`, e.g. a state store that cannot be written: disk "
        "full, read-only, locked by another process); `cycles` in a row so far. The daemon carries on after the "
        "interval, says so on stderr and in `status`, and nothing was counted that the store does not hold.",
    )


def catalog() -> dict[str, str]:
    return {event.value: event.meaning for event in Event}
