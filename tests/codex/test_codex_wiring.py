"""Codex wiring: the receipt channel, whose configuration a trust goes to, and the
conversation learned from the ready receipt."""

from __future__ import annotations

import tomllib
from pathlib import Path

from adapters.agents.receipt_line import asking_command, asking_timeout
from adapters.harnesses.codex.hooks import arguments, receipt_channel
from adapters.receipts.files import FileReceipts
from app.container import HarnessTrust, receipt_channels
from domain.receipts import Receipt, ReceiptKind, ReceiptMode, conversation_of
from domain.refs import RepoRef, WorkItemRef
from tests.fakes.receipts import FakeTrust


def test_a_codex_spawn_gets_its_hooks_as_dash_c_overrides_writing_into_its_receipt_folder(
    tmp_path: Path,
) -> None:
    receipts = FileReceipts(tmp_path, channels={"codex": receipt_channel})
    item = WorkItemRef(RepoRef.parse("acme/widgets"), 7)
    channel = receipts.prepare(item, "s1", mode=ReceiptMode.HOOKS, hooks="codex")
    assert channel.args == arguments(receipts.folder(item, "s1")) and channel.env == ()
    assert receipts.folder(item, "s1").is_dir()


def test_each_spawn_is_trusted_in_its_own_harness_configuration_and_one_with_no_writer_nowhere() -> None:
    claude, codex = FakeTrust(), FakeTrust()
    trust = HarnessTrust({"claude": claude, "codex": codex})
    assert trust.trust("/w/a", hooks="codex") and trust.trust("/w/b", hooks="claude")
    assert trust.trust("/w/c", hooks="gemini") is False and trust.trust("/w/d") is False
    assert (codex.trusted, claude.trusted) == (["/w/a"], ["/w/b"])


def test_the_conversation_is_the_one_the_last_ready_receipt_named_else_the_first_prompts() -> None:
    receipts = [
        Receipt(ReceiptKind.READY, "1", conversation="first", source="startup"),
        Receipt(ReceiptKind.PROMPT, "2", conversation="first"),
        Receipt(ReceiptKind.READY, "3", conversation="second", source="resume"),
        Receipt(ReceiptKind.TURN_ENDED, "4", conversation="other"),
    ]
    assert conversation_of(receipts) == "second"
    # no ready receipt (opencode's waits for its TUI, a kill may come first): the first prompt's
    assert conversation_of(receipts[1:2]) == "first"
    assert conversation_of(receipts[3:]) == ""


def test_a_codex_spawns_permission_request_hook_waits_ask_wait_seconds_for_an_answer_from_the_item(
    tmp_path: Path,
) -> None:
    receipts = FileReceipts(tmp_path, channels=receipt_channels(ask_wait_seconds=60))
    item = WorkItemRef(RepoRef.parse("acme/widgets"), 7)
    channel = receipts.prepare(item, "s1", mode=ReceiptMode.HOOKS, hooks="codex")
    folder = receipts.folder(item, "s1")
    assert channel.args == arguments(folder, ask_wait_seconds=60)
    hooks = dict(tomllib.loads(value)["hooks"].popitem() for value in channel.args[1:-2:2])
    assert hooks["PermissionRequest"] == [
        {"hooks": [{"type": "command", "command": asking_command(folder, 60), "timeout": asking_timeout(60)}]}
    ]
