"""One daemon, several agents: routing rules pick each item's harness at its first spawn, the item
keeps it, and `the-loop start <harness>` changes it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.usecases.delivery.workspaces import WorkspaceConfig
from app.usecases.wiring import UseCases
from domain.errors import TmuxUnanswered
from domain.events import Event
from domain.model import AGENT_MARKER, Reaction, SpawnMode
from domain.refs import RepoRef, WorkItemRef
from domain.routing import RepoPattern, Rule
from domain.workspace import WorkspaceMode
from tests.service.world import CLAUDE, CURSOR, World

API = RepoRef.parse("acme/api")
CODEX = replace(CLAUDE, name="codex", binary="codex")
HARNESSES = {"claude": CLAUDE, "codex": CODEX}
PLAN = replace(CLAUDE, args=("--permission-mode", "plan"))


def _rules(*, api: str = "claude", label: str = "codex") -> tuple[Rule, ...]:
    return (
        Rule(api, (RepoPattern("github.com", "acme", "api"),), frozenset(), "plan" if api == "claude" else ""),
        Rule(label, (), frozenset({"codex"})),
    )


def _world(**overrides: object) -> World:
    settings: dict[str, object] = {
        "harness": "",
        "harnesses": dict(HARNESSES),
        "rules": _rules(),
        "variants": {("claude", "plan"): PLAN},
        "repos": (API, RepoRef.parse("acme/widgets")),
    }
    return World(**{**settings, **overrides})  # type: ignore[arg-type]


def _reconfigured(world: World, **changes: object) -> None:
    """The daemon restarted on a changed configuration, its state kept."""
    for key, value in changes.items():
        setattr(world, key, value)
    world.usecases = UseCases(world.ports, world.configs())


def _binary(world: World, ref: WorkItemRef) -> str:
    return world.session(ref).argv[0]


def _notices(world: World, ref: WorkItemRef) -> list[str]:
    return [body for item, body in world.tracker.posted if item == ref and AGENT_MARKER in body]


def test_each_item_gets_the_harness_of_the_first_rule_that_matches_it() -> None:
    world = _world()
    api = world.item(1, repo=API)
    second_opinion = world.item(2, labels=("loop", "codex"))

    world.cycle()

    assert (world.record(api).harness, _binary(world, api)) == ("claude", "claude")
    assert world.session(api).argv[1:3] == ("--permission-mode", "plan")  # the rule's mode
    assert world.record(api).permission_mode == "plan"
    assert (world.record(second_opinion).harness, _binary(world, second_opinion)) == ("codex", "codex")


def test_changed_rules_never_move_a_live_conversation_nor_a_respawned_one() -> None:
    world = _world()
    api = world.item(1, repo=API)
    world.cycle()
    first_conversation = world.record(api).harness_session_id
    _reconfigured(world, rules=_rules(api="codex"))

    world.comment(api, "go on")
    world.cycle()
    assert world.record(api).harness == "claude" and world.spawns() == 1
    assert any("go on" in text for text in world.session(api).received)

    world.vanish(api)  # its session ends: the next comment respawns it
    world.comment(api, "and then")
    world.cycle()

    record = world.record(api)
    assert (record.harness, _binary(world, api)) == ("claude", "claude")
    assert record.harness_session_id == first_conversation  # resumed, its own conversation
    assert "--resume" in world.session(api).argv and "plan" in world.session(api).argv


def test_start_with_a_harness_ends_the_running_agent_and_starts_that_one_fresh_with_one_notice() -> None:
    world = _world()
    api = world.item(1, repo=API)
    world.cycle()
    claude_conversation = world.record(api).harness_session_id
    switch = world.comment(api, "the-loop start codex")

    world.cycle()

    record = world.record(api)
    assert (record.harness, _binary(world, api)) == ("codex", "codex")
    assert record.harness_session_id != claude_conversation and "--resume" not in world.session(api).argv
    assert record.permission_mode == ""  # the rule's mode was for claude
    assert world.tmux.calls.count(("terminate_harness", api.target.name)) == 1
    notices = [body for body in _notices(world, api) if "agent is now" in body]
    assert len(notices) == 1 and "**codex** instead of **claude**" in notices[0]
    changed = world.events.named(Event.SESSION_HARNESS_CHANGED)
    assert [(e["harness"], e["was"], e["by"]) for e in changed] == [("codex", "claude", "control")]
    assert (switch.id, Reaction.CONTROL) in world.tracker.reactions

    world.comment(api, "now you")
    world.cycle()
    assert any("now you" in text for text in world.session(api).received)  # into codex
    assert world.record(api).harness == "codex"


def test_start_naming_no_configured_harness_does_nothing_and_never_echoes_the_name() -> None:
    world = _world()
    api = world.item(1, repo=API)
    world.cycle()
    asked = world.comment(api, "the-loop start hal9000")

    world.cycle()

    assert world.record(api).harness == "claude" and world.spawns() == 1
    reply = _notices(world, api)[-1]
    assert "no harness the-loop has" in reply and "`claude`, `codex`" in reply and "hal9000" not in reply
    assert (asked.id, Reaction.FAILED) in world.tracker.reactions
    assert [e["reason"] for e in world.events.named(Event.CONTROL_REFUSED)] == ["no such harness"]


def test_an_item_no_rule_covers_waits_told_once_until_a_start_names_its_harness() -> None:
    world = _world()
    other = world.item(3)  # acme/widgets, no codex label: no rule, no default
    world.cycle()
    waiting = world.comment(other, "please look")
    world.cycle()
    world.cycle()

    assert other.target.name not in world.tmux.sessions
    assert world.ledger(other).attempts(waiting.id) == 0 and world.ledger(other).pending_entry(waiting.id)
    assert len([body for body in _notices(world, other) if "no agent configured" in body]) == 1
    assert len(world.events.named(Event.ROUTING_UNMATCHED)) == 1

    world.comment(other, "the-loop start codex")
    world.cycle()

    assert world.record(other).harness == "codex"
    assert any("please look" in text for text in [world.session(other).prompt, *world.session(other).received])
    assert world.ledger(other).pending == ()


def test_a_start_naming_a_harness_that_waits_before_its_first_attempt_is_told_once() -> None:
    mib = 1024 * 1024
    world = _world(min_free_memory=1024 * mib)
    other = world.item(3)  # acme/widgets, no codex label: no rule, no default
    held = []

    def meminfo() -> int:
        """Short from the start's first cycle until it is back: its spawn is held, no attempt spent."""
        return 512 * mib if held and held[-1] else 4096 * mib

    world.meminfo = meminfo
    world.cycle()
    world.comment(other, "the-loop start codex")
    held.append(True)
    world.cycle()
    world.cycle()
    world.cycle()
    held.append(False)
    world.cycle()

    assert world.record(other).harness == "codex" and other.target.name in world.tmux.sessions
    assert len([body for body in _notices(world, other) if "agent is now **codex**" in body]) == 1


def test_a_default_harness_covers_what_no_rule_does() -> None:
    world = _world(harness="claude", variants={})
    other = world.item(3)

    world.cycle()

    assert world.record(other).harness == "claude" and "plan" not in world.session(other).argv


def test_the_status_reply_names_the_agent_the_item_runs() -> None:
    world = _world()
    second_opinion = world.item(2, labels=("loop", "codex"))
    world.cycle()
    world.comment(second_opinion, "the-loop status")

    world.cycle()

    assert "- Agent: codex, " in _notices(world, second_opinion)[-1]


def test_the_operator_gives_an_item_another_harness_from_the_command_line() -> None:
    world = _world()
    api = world.item(1, repo=API)
    world.cycle()

    said = world.admin().start(api, harness="CODEX")  # the configured name, any case
    world.cycle()

    assert said == f"{api}: the daemon ends claude and starts codex fresh at its next cycle"
    assert len([body for body in _notices(world, api) if "**codex** instead of **claude**" in body]) == 1
    assert (world.record(api).harness, _binary(world, api)) == ("codex", "codex")
    assert [(e["harness"], e["by"]) for e in world.events.named(Event.SESSION_HARNESS_CHANGED)] == [
        ("codex", "operator")
    ]
    assert world.ledger(api).start is None  # it started


def test_the_operator_starts_an_item_no_rule_covers_with_a_named_harness() -> None:
    world = _world()
    other = world.item(3)
    world.cycle()
    world.comment(other, "please look")
    world.cycle()

    world.admin().start(other, harness="codex")
    world.cycle()

    assert world.record(other).harness == "codex" and world.ledger(other).pending == ()


def test_the_operator_naming_an_unknown_harness_changes_nothing() -> None:
    world = _world()
    api = world.item(1, repo=API)
    world.cycle()
    before = world.ledger(api)

    with pytest.raises(ValueError, match=r"no harness named 'hal' \(known: claude, codex\)"):
        world.admin().start(api, harness="hal")

    assert world.ledger(api) == before and world.record(api).harness == "claude"


def test_the_operator_starts_again_an_idle_item_whose_agent_is_gone() -> None:
    world = _world()
    api = world.item(1, repo=API)
    world.cycle()
    world.tmux.exit_harness(api.target.name)  # its agent exited; the item is idle, nothing pending
    world.cycle()
    spawns = world.spawns()

    world.admin().start(api)
    world.cycle()

    assert world.spawns() == spawns + 1 and world.record(api).harness == "claude"
    assert world.ledger(api).start is None


def test_a_switch_that_cannot_end_the_running_agent_changes_nothing_and_is_tried_again() -> None:
    world = _world()
    api = world.item(1, repo=API)
    world.cycle()
    ended = world.tmux.terminate_harness

    def unanswered(*args: object, **kwargs: object) -> None:
        raise TmuxUnanswered("tmux did not answer within 10 s")

    world.tmux.terminate_harness = unanswered  # type: ignore[method-assign]
    world.comment(api, "the-loop start codex")
    world.cycle()

    assert world.record(api).harness == "claude" and not world.session(api).pane_dead  # Claude runs on
    failed = world.events.named(Event.SESSION_HARNESS_CHANGE_FAILED)
    assert [(e["harness"], e["was"]) for e in failed] == [("codex", "claude")]
    assert not [body for body in _notices(world, api) if "agent is now" in body]

    world.tmux.terminate_harness = ended  # type: ignore[method-assign]
    world.cycle()

    assert (world.record(api).harness, _binary(world, api)) == ("codex", "codex")


def test_a_switch_whose_agent_still_runs_after_its_signal_changes_nothing() -> None:
    world = _world()
    api = world.item(1, repo=API)
    world.cycle()
    world.tmux.terminate_harness = lambda *args, **kwargs: None  # type: ignore[method-assign]
    world.comment(api, "the-loop start codex")

    world.cycle()

    assert world.record(api).harness == "claude" and _binary(world, api) == "claude"
    reasons = [e["reason"] for e in world.events.named(Event.SESSION_HARNESS_CHANGE_FAILED)]
    assert reasons and "its pane is live" in reasons[0]


def test_a_start_naming_the_harness_a_rule_gives_the_item_keeps_the_rules_permission_mode() -> None:
    world = _world(spawn_mode=SpawnMode.NEVER)
    api = world.item(1, repo=API)  # not armed: only a start spawns it
    world.cycle()
    world.comment(api, "the-loop start claude")
    world.cycle()
    assert world.session(api).argv[1:3] == ("--permission-mode", "plan")

    world.comment(api, "the-loop start codex")
    world.cycle()
    world.comment(api, "the-loop start claude")
    world.cycle()

    assert world.record(api).permission_mode == "plan" and world.session(api).argv[1:3] == ("--permission-mode", "plan")


def test_a_start_may_name_only_a_harness_the_configuration_routes_to_or_defines() -> None:
    world = _world()
    world.harnesses["cursor"] = CURSOR
    api = world.item(1, repo=API)
    world.cycle()
    spawn = replace(world.configs().spawn, startable=("claude", "codex"))
    world.usecases = UseCases(world.ports, replace(world.configs(), spawn=spawn))
    world.comment(api, "the-loop start cursor")

    world.cycle()

    assert world.record(api).harness == "claude"
    assert "`claude`, `codex`" in _notices(world, api)[-1] and "cursor" not in _notices(world, api)[-1]


def test_the_notice_of_an_item_no_rule_covers_is_said_once_even_when_a_post_fails_first() -> None:
    world = _world()
    other = world.item(3)
    world.tracker.fail_posts = True
    world.cycle()
    world.comment(other, "please look")
    world.cycle()
    assert world.events.named(Event.NOTICE_FAILED) and not world.events.named(Event.ROUTING_UNMATCHED)
    world.tracker.fail_posts = False
    world.cycle()
    world.cycle()

    assert len([body for body in _notices(world, other) if "no agent configured" in body]) == 1
    assert len(world.events.named(Event.ROUTING_UNMATCHED)) == 1


def _workspace_rules(*, api_workspace: str = "api") -> tuple[Rule, ...]:
    return (Rule("claude", (RepoPattern("github.com", "acme", "api"),), workspace=api_workspace), Rule("codex"))


def test_an_item_a_rule_gives_a_workspace_gets_its_folder_there_and_an_item_of_no_such_rule_the_default() -> None:
    world = _world(
        rules=_workspace_rules(),
        named_workspaces={"api": WorkspaceConfig(mode=WorkspaceMode.WORKTREE, setup="npm ci")},
        workdirs={"api": "/srv/api/{slug}"},
    )
    world.git.add_remote(API)
    api, widget = world.item(1, repo=API), world.item(2)

    world.cycle()

    assert world.session(api).cwd == world.record(api).cwd == f"/srv/api/{api.slug}"
    assert world.record(api).workspace == "api" and world.git.worktrees[f"/srv/api/{api.slug}"].ready
    assert world.git.setups == ["npm ci"]
    assert world.session(widget).cwd == world.record(widget).cwd == f"/work/{widget.slug}"
    assert world.record(widget).workspace == "" and f"/work/{widget.slug}" not in world.git.worktrees


def test_a_changed_rule_never_moves_a_live_items_folder_nor_a_respawned_ones() -> None:
    world = _world(
        rules=_workspace_rules(),
        named_workspaces={"api": WorkspaceConfig(), "web": WorkspaceConfig(mode=WorkspaceMode.WORKTREE)},
        workdirs={"api": "/srv/api/{slug}", "web": "/srv/web/{slug}"},
    )
    world.git.add_remote(API)
    api = world.item(1, repo=API)
    world.cycle()
    _reconfigured(world, rules=_workspace_rules(api_workspace="web"))

    world.vanish(api)  # its session ends: the next comment respawns it
    world.comment(api, "and then")
    world.cycle()

    assert world.session(api).cwd == world.record(api).cwd == f"/srv/api/{api.slug}"
    assert world.record(api).workspace == "api" and world.spawns() == 2
    assert world.git.worktrees == {}  # made as its own workspace makes folders, never as the rule's now


@pytest.mark.parametrize("spawn_mode", [SpawnMode.LABELED, SpawnMode.NEVER])
def test_a_start_naming_no_harness_on_an_item_with_no_agent_is_refused_saying_how_to_name_one(
    spawn_mode: SpawnMode,
) -> None:
    world = _world(spawn_mode=spawn_mode)
    other = world.item(3)  # no rule covers it, no default
    world.cycle()
    asked = world.comment(other, "the-loop start")

    world.cycle()

    reply = _notices(world, other)[-1]
    assert "no agent configured" in reply and "`the-loop start <harness>`" in reply and "`claude`, `codex`" in reply
    assert (asked.id, Reaction.FAILED) in world.tracker.reactions
    assert [e["reason"] for e in world.events.named(Event.CONTROL_REFUSED)] == ["no agent for the item"]
    start = world.ledger(other).start  # the labelled item's own start waits for an agent, as before
    assert (start is None or start.reason == "first-sight") and other.target.name not in world.tmux.sessions
    said = len(_notices(world, other))
    world.cycle()
    assert len(_notices(world, other)) == said  # the reply once, and no start left to try


def _harness_removed(world: World) -> None:
    """The operator removed Claude Code from the configuration and routes acme/api to Codex."""
    _reconfigured(world, harnesses={"codex": CODEX}, rules=_rules(api="codex"), variants={})


def test_an_item_whose_harness_was_removed_waits_told_once_until_a_start_names_another() -> None:
    world = _world()
    api = world.item(1, repo=API)
    world.cycle()
    _harness_removed(world)
    waiting = world.comment(api, "go on")

    world.cycle()
    world.cycle()

    assert not world.events.named(Event.POLL_ITEM_FAILED)
    assert [e["harness"] for e in world.events.named(Event.SESSION_HARNESS_UNCONFIGURED)] == ["claude"]
    told = [body for body in _notices(world, api) if "in the configuration no more" in body]
    assert len(told) == 1 and "`the-loop start <harness>`" in told[0] and "`codex`" in told[0]
    assert world.ledger(api).attempts(waiting.id) == 0 and world.ledger(api).pending_entry(waiting.id)

    world.comment(api, "the-loop start codex")
    world.cycle()

    assert (world.record(api).harness, _binary(world, api)) == ("codex", "codex")
    assert any("go on" in text for text in [world.session(api).prompt, *world.session(api).received])


def test_a_plain_start_on_an_item_whose_harness_was_removed_is_refused_naming_the_harnesses() -> None:
    world = _world()
    api = world.item(1, repo=API)
    world.cycle()
    _harness_removed(world)
    asked = world.comment(api, "the-loop start")

    world.cycle()

    reply = _notices(world, api)[-1]
    assert (
        "**claude** is in the configuration no more" in reply and "`the-loop start <harness>`, one of `codex`" in reply
    )
    assert (asked.id, Reaction.FAILED) in world.tracker.reactions
    assert "no agent for the item" in [e["reason"] for e in world.events.named(Event.CONTROL_REFUSED)]
    assert not world.events.named(Event.POLL_ITEM_FAILED)


def test_a_status_of_an_item_whose_harness_was_removed_says_so() -> None:
    world = _world()
    api = world.item(1, repo=API)
    world.cycle()
    _harness_removed(world)
    world.comment(api, "the-loop status")

    world.cycle()

    assert "- Agent: claude, in the configuration no more" in _notices(world, api)[-1]
    assert not world.events.named(Event.POLL_ITEM_FAILED)


def test_the_spawn_event_says_what_chose_the_items_agent() -> None:
    world = _world(harness="claude")
    api, second_opinion, other = world.item(1, repo=API), world.item(2, labels=("loop", "codex")), world.item(3)
    world.cycle()
    unrouted = _world()
    named = unrouted.item(3)
    unrouted.cycle()
    unrouted.comment(named, "the-loop start codex")
    unrouted.cycle()

    chosen = {e["work_item"]: e["chosen_by"] for e in world.events.named(Event.SESSION_SPAWNED)}
    assert chosen == {
        str(api): "routing.rules[0]",
        str(second_opinion): "routing.rules[1]",
        str(other): "routing.defaultHarness",
    }
    assert [e["chosen_by"] for e in unrouted.events.named(Event.SESSION_SPAWNED)] == ["a start naming it"]


def test_an_item_told_it_had_no_agent_is_told_again_when_the_agent_a_start_gave_it_is_removed() -> None:
    world = _world()
    other = world.item(3)  # no rule covers it: told once
    world.cycle()
    world.comment(other, "the-loop start codex")
    world.cycle()
    _reconfigured(world, harnesses={"claude": CLAUDE}, rules=_rules()[:1])
    world.comment(other, "more")

    world.cycle()

    assert len(world.events.named(Event.ROUTING_UNMATCHED)) == 1
    assert [e["harness"] for e in world.events.named(Event.SESSION_HARNESS_UNCONFIGURED)] == ["codex"]


def test_a_start_naming_another_harness_keeps_the_workspace_the_items_route_gives_and_a_switch_its_folder() -> None:
    world = _world(
        spawn_mode=SpawnMode.NEVER,
        rules=_workspace_rules(),
        named_workspaces={"api": WorkspaceConfig()},
        workdirs={"api": "/srv/api/{slug}"},
    )
    api = world.item(1, repo=API)  # not armed: only a start spawns it
    world.cycle()
    world.comment(api, "the-loop start codex")
    world.cycle()
    assert (world.record(api).harness, world.record(api).workspace) == ("codex", "api")

    world.comment(api, "the-loop start claude")
    world.cycle()

    record = world.record(api)
    assert (record.harness, record.workspace) == ("claude", "api")
    assert world.session(api).cwd == record.cwd == f"/srv/api/{api.slug}"


def test_an_item_given_another_harness_keeps_no_memory_figure_of_the_agent_it_had() -> None:
    """Its record's memory figure was the last agent's: kept, it would stand for the new harness's (the
    item's row, `doctor`'s agents that fit) until the new agent's first turn ended."""
    from app.cli.doctor import fit_checks

    world = _world()
    api = world.item(1, repo=API)
    world.cycle()
    world.store.save_session(replace(world.record(api), rss_bytes=900 * 1024**2))  # measured at claude's turn's end
    world.comment(api, "the-loop start codex")

    world.cycle()

    assert world.record(api).harness == "codex"
    assert world.record(api).rss_bytes is None
    assert [c.subject for c in fit_checks(world.store.sessions(), 24 * 1024**3)] == []


def test_a_hibernated_item_given_another_harness_starts_it_fresh_never_as_a_wake() -> None:
    """Its hibernation was the ended agent's: the new harness has no conversation to wake, so its
    start is not said `woke_from: hibernation`."""
    world = _world()
    api = world.item(1, repo=API)
    world.cycle()
    world.store.save_session(replace(world.record(api), hibernated_at=world.clock.now()))
    world.comment(api, "the-loop start codex")

    world.cycle()

    world.comment(api, "go on")
    world.cycle()

    assert world.record(api).harness == "codex"
    started = [e for e in world.events.named(Event.SESSION_RESPAWNED) + world.events.named(Event.SESSION_SPAWNED)]
    assert started and all(e.get("woke_from") is None for e in started), started
