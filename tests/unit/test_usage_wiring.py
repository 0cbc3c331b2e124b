"""The container's usage port: each built-in harness read by the usage reader of the package whose
hooks it runs (Claude Code's, Codex's, Gemini CLI's and opencode's have one), and another harness said unknown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from adapters.harnesses import usage_readers
from app.config.settings import Settings
from app.container import Container
from domain.receipts import EndedTurn, Receipt, ReceiptKind
from domain.usage import UsageUnknown
from tests.unit import test_claude_usage as claude
from tests.unit import test_codex_usage as codex
from tests.unit import test_gemini_usage as gemini
from tests.unit import test_opencode_usage as opencode


def ended(path: Path, entries: list[dict[str, Any]], turn: str) -> EndedTurn:
    path.write_text("".join(json.dumps(entry) + "\n" for entry in entries), encoding="utf-8")
    prompt = Receipt(ReceiptKind.PROMPT, key="1", prompt="hello", turn=turn, transcript=str(path))
    return EndedTurn(prompt, Receipt(ReceiptKind.TURN_ENDED, key="2", turn=turn, transcript=str(path)))


def test_the_packages_that_read_a_turns_usage_are_claude_codes_codexs_gemini_clis_and_opencodes() -> None:
    assert sorted(usage_readers()) == ["claude", "codex", "gemini", "opencode"]


def test_the_containers_usage_reads_each_built_in_harness_by_its_packages_reader(tmp_path: Path) -> None:
    usage = Container(settings=Settings.model_validate({"state": {"root": str(tmp_path / "state")}})).usage()
    transcript = ended(tmp_path / "s.jsonl", [*claude.TURN, *claude.END], claude.PROMPT)
    rollout = ended(tmp_path / "rollout.jsonl", [*codex.RUNNING, codex.complete(codex.TURN)], codex.TURN)

    assert usage.turn_usage("claude", transcript) == claude.SPENT
    assert usage.turn_usage("codex", rollout) == codex.SPENT
    record = gemini.ended(gemini.write(tmp_path / "session.jsonl", [*gemini.HEAD, *gemini.TURN]))
    assert usage.turn_usage("gemini", record) == gemini.SPENT
    assert usage.turn_usage("opencode", opencode.ended(opencode.store(tmp_path, opencode.TURN))) == opencode.SPENT
    found = usage.turn_usage("cursor", transcript)
    assert isinstance(found, UsageUnknown) and "no usage reader" in found.reason
