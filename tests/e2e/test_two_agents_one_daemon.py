"""One daemon, two real agents: routing rules give an acme/api item real Claude Code and a
`codex`-labelled item real Codex in one World on one tmux server, each agent offline against its
own model API's stand-in, every delivery confirmed by that agent's own hooks. A rule changed while
both run moves neither; `the-loop start codex` hands the Claude item to Codex, fresh.

With no default harness only the rules pick: were they ignored, no item would get an agent at all."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from adapters.agents.receipt_line import SUFFIX
from adapters.harnesses.claude.trust import ClaudeTrust
from adapters.harnesses.codex.trust import CodexTrust
from adapters.receipts.files import FileReceipts
from app.container import HarnessTrust, receipt_channels
from app.usecases.wiring import UseCases
from domain.events import Event
from domain.receipts import ReceiptKind
from domain.refs import RepoRef, WorkItemRef
from domain.routing import RepoPattern, Rule
from tests.agent_tmux import AgentTmux, pane_pid
from tests.anthropic_standin.server import AnthropicStandIn
from tests.claude.fixtures import anthropic, claude_binary
from tests.claude.home import ClaudeHome, claude_env
from tests.claude.loop import TimedEvents, WallClock, builtin_spec
from tests.codex.rig import codex_binary, codex_env, codex_home, openai
from tests.openai_standin.server import OpenAIStandIn
from tests.processes import gone
from tests.real_agents import private_tmux, rig_base, worktree
from tests.service.world import REPO, World
from tests.tmux_support import wait_for

__all__ = ["anthropic", "claude_binary", "codex_binary", "openai"]

pytestmark = [pytest.mark.claude, pytest.mark.codex, pytest.mark.tmux]

API = RepoRef.parse("acme/api")
API_PATTERN = RepoPattern.parse("acme/api", host=API.host)
RULES = (Rule("claude", repos=(API_PATTERN,)), Rule("codex", labels=frozenset({"codex"})))
SWAPPED = (Rule("codex", repos=(API_PATTERN,)), Rule("claude", labels=frozenset({"codex"})))

StandIn = AnthropicStandIn | OpenAIStandIn


@dataclass
class TwoAgents:
    """The module's world, its tmux server, and its two items: `api` (acme/api) and `second`
    (another repository, labelled `codex`); each agent's model API stand-in by harness name."""

    world: World
    tmux: AgentTmux
    receipts: FileReceipts  # the world's
    api: WorkItemRef
    second: WorkItemRef
    standins: dict[str, StandIn]
    homes: dict[str, Path]  # where each agent keeps its own files (its transcripts among them)

    def binary(self, ref: WorkItemRef) -> str:
        """The executable running in the item's pane now (the spawn wrapper execs the harness)."""
        pid = pane_pid(self.tmux, self.world.record(ref).pane_id)
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()

    def prompt_hook(self, ref: WorkItemRef, text: str) -> dict[str, Any]:
        """The hook JSON the item's current agent wrote when it took the prompt carrying `text`."""
        folder = self.receipts.folder(ref, self.world.record(ref).spawn_id)

        def found() -> dict[str, Any] | None:
            hooks = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob(f"*{SUFFIX}"))]
            return next((h for h in hooks if text in str(h.get("prompt", ""))), None)

        return wait_for(found, timeout=30, what=f"a prompt hook carrying {text!r}")  # type: ignore[no-any-return]

    def confirmed_by(self, harness: str, ref: WorkItemRef, text: str, delivery: str, *, only: bool = True) -> None:
        """`delivery` (a comment's id, or `start`) was confirmed by receipt, the receipt written by
        `harness`'s own hook (its transcript in that agent's home), and `text` reached that agent's
        model API; with `only`, never the other's."""
        succeeded = [
            e
            for e in self.world.events.named(Event.DISPATCH_SUCCEEDED)
            if e["work_item"] == str(ref) and delivery in (e.get("comment_id"), e["delivery_id"].split("-")[0])
        ]
        assert [e["confirmed_by"] for e in succeeded[-1:]] == ["receipt"], succeeded
        hook = self.prompt_hook(ref, text)
        assert Path(hook["transcript_path"]).is_relative_to(self.homes[harness]), hook
        mine, other = self.standins[harness], next(s for n, s in self.standins.items() if n != harness)
        wait_for(lambda: heard(mine, text), timeout=60, what=f"{harness}'s model API to get {text!r}")
        assert not (only and heard(other, text))


def heard(standin: StandIn, text: str) -> bool:
    """Some request to the model API's stand-in carried `text`."""
    return any(text in json.dumps(request.body) for request in list(standin.log))


def reconfigured(world: World, rules: tuple[Rule, ...]) -> None:
    """The daemon restarted on changed routing rules, its state kept."""
    world.rules = rules
    world.usecases = UseCases(world.ports, world.configs())


@pytest.fixture(scope="module")
def agents(
    claude_binary: Path,
    codex_binary: Path,
    anthropic: AnthropicStandIn,
    openai: OpenAIStandIn,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[TwoAgents]:
    """One tmux server whose panes get what each agent's rig gives it (one HOME: Claude's
    ~/.claude.json, Codex's CODEX_HOME beside it; each API's address and key), one world with both
    agents, and one cycle that spawns both items in never-seen git worktrees."""
    base = rig_base(tmp_path_factory, "two-agents")
    home = ClaudeHome(base / "home")
    codex_dir = codex_home(home.path / ".codex", openai.base_url)
    tmux = private_tmux(base / "tmux", claude_env(home, anthropic.base_url) | codex_env(home.path, codex_dir))
    receipts = FileReceipts(base / "receipts", channels=receipt_channels(ask_wait_seconds=0.0))
    world = World(
        tmux=tmux.adapter(),  # type: ignore[arg-type]
        harness="",  # only the rules pick
        harnesses={"claude": builtin_spec("claude", claude_binary), "codex": builtin_spec("codex", codex_binary)},
        rules=RULES,
        repos=(API, REPO),
        clock=WallClock(),
        events=TimedEvents(),
        workdir=str(base / "work" / "{slug}"),
        receipts=receipts,
        ask_wait_seconds=0.0,
        trust_port=HarnessTrust(
            {"claude": ClaudeTrust(home.config_file), "codex": CodexTrust(codex_dir / "config.toml")}
        ),
        session_ids=lambda: str(uuid.uuid4()),
    )
    anthropic.reset()
    openai.reset()
    agents = TwoAgents(
        world,
        tmux,
        receipts,
        api=world.item(1, repo=API),
        second=world.item(2, labels=("loop", "codex")),
        standins={"claude": anthropic, "codex": openai},
        homes={"claude": home.path / ".claude", "codex": codex_dir},
    )
    for ref in (agents.api, agents.second):
        worktree(base, ref.slug)
    world.cycle()
    try:
        yield agents
    finally:
        ended(agents)
        tmux.kill_server()


def ended(agents: TwoAgents) -> None:
    """Each item's agent ended, and waited for: Claude rewrites its ~/.claude.json on its way out."""
    for record in agents.world.store.sessions():
        pid = pane_pid(agents.tmux, record.pane_id)
        agents.tmux.run("kill-session", "-t", record.target.exact, check=False)
        if pid:
            wait_for(lambda pid=pid: gone(pid), timeout=20, what=f"{record.harness} {pid} exited")


def test_each_item_gets_the_agent_its_rule_names_and_each_agent_confirms_its_own_item(
    agents: TwoAgents, claude_binary: Path, codex_binary: Path
) -> None:
    world, api, second = agents.world, agents.api, agents.second
    assert (world.record(api).harness, agents.binary(api)) == ("claude", str(claude_binary))
    assert (world.record(second).harness, agents.binary(second)) == ("codex", str(codex_binary))
    agents.confirmed_by("claude", api, f"You are the agent for {api}", "start")
    agents.confirmed_by("codex", second, f"You are the agent for {second}", "start")
    to_claude = world.comment(api, "api: add a health check")
    to_codex = world.comment(second, "widgets: a second opinion, please")

    world.cycle()

    agents.confirmed_by("claude", api, "api: add a health check", to_claude.id)
    agents.confirmed_by("codex", second, "widgets: a second opinion, please", to_codex.id)


def test_a_rule_changed_while_both_run_moves_neither_agent_nor_its_conversation(agents: TwoAgents) -> None:
    world, api, second = agents.world, agents.api, agents.second
    before = {ref: (world.record(ref).harness, world.record(ref).harness_session_id) for ref in (api, second)}
    assert [harness for harness, _ in before.values()] == ["claude", "codex"]
    reconfigured(world, SWAPPED)  # acme/api would now get Codex, the codex label Claude
    comments = {api: world.comment(api, "api: go on"), second: world.comment(second, "widgets: go on")}

    world.cycle()

    for ref, comment in comments.items():
        harness, conversation = before[ref]
        agents.confirmed_by(harness, ref, comment.body, comment.id)
        assert (world.record(ref).harness, world.record(ref).harness_session_id) == (harness, conversation)
        prompts = [r for r in world.receipts.read(ref, world.record(ref).spawn_id) if r.kind is ReceiptKind.PROMPT]
        assert {r.conversation for r in prompts} == {conversation}
    assert world.events.named(Event.SESSION_RESPAWNED) == []


def test_after_a_rule_change_a_killed_agent_is_resumed_as_the_same_agent_in_the_same_conversation(
    agents: TwoAgents, codex_binary: Path
) -> None:
    world, second = agents.world, agents.second
    reconfigured(world, SWAPPED)  # the codex label would now get Claude
    codex = world.record(second)
    assert codex.harness == "codex"
    pid = pane_pid(agents.tmux, codex.pane_id)
    agents.tmux.run("kill-session", "-t", second.target.exact)
    wait_for(lambda: gone(pid), timeout=20, what=f"Codex {pid} exited")
    comment = world.comment(second, "widgets: carry on after the kill")

    world.cycle()

    respawned = [e for e in world.events.named(Event.SESSION_RESPAWNED) if e["work_item"] == str(second)]
    assert [(e["harness"], e["resumed"]) for e in respawned] == [("codex", True)]
    resumed = world.record(second)
    assert (resumed.harness, resumed.harness_session_id) == ("codex", codex.harness_session_id)
    assert agents.binary(second) == str(codex_binary)
    agents.confirmed_by("codex", second, comment.body, comment.id)


def test_start_codex_on_the_claude_item_ends_claude_and_codex_takes_the_item_fresh(
    agents: TwoAgents, codex_binary: Path
) -> None:
    world, api = agents.world, agents.api
    claude = world.record(api)
    assert claude.harness == "claude"
    claude_pid = pane_pid(agents.tmux, claude.pane_id)
    switch = world.comment(api, "the-loop start codex")

    world.cycle()

    assert gone(claude_pid)
    changed = world.events.named(Event.SESSION_HARNESS_CHANGED)
    assert [(e["harness"], e["was"], e["by"]) for e in changed] == [("codex", "claude", "control")]
    codex = world.record(api)
    assert (codex.harness, codex.target, agents.binary(api)) == ("codex", claude.target, str(codex_binary))
    ready = [r for r in world.receipts.read(api, codex.spawn_id) if r.kind is ReceiptKind.READY]
    assert [r.source for r in ready] == ["startup"]  # fresh, never a resume of Claude's conversation
    assert codex.harness_session_id == ready[0].conversation != claude.harness_session_id
    # Codex never had this item before; Claude had this text at its own start, and is gone
    agents.confirmed_by("codex", api, f"You are the agent for {api}", "start", only=False)
    assert switch.id not in [e.get("comment_id") for e in world.events.named(Event.DISPATCH_SUCCEEDED)]
    later = world.comment(api, "api: over to you, Codex")

    world.cycle()

    agents.confirmed_by("codex", api, "api: over to you, Codex", later.id)
