"""UsagePort, the same on HarnessUsage (each configured harness read by its package's reader, here
Claude Code's over a transcript on disk) and on the fake the service tests use: a recorded turn's
usage, unknown for a turn not recorded or a harness with no reader. HarnessUsage alone reads a turn
not yet written whole again, a short while, before it says it unknown."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from adapters.agents.usage import HarnessUsage, harness_usage
from adapters.harnesses import usage_readers
from domain.model import HarnessSpec
from domain.ports import UsagePort
from domain.receipts import EndedTurn, Receipt, ReceiptKind, ReceiptMode
from domain.usage import TurnUsage, UsageUnknown
from tests.fakes.usage import FakeUsage

TURN = "p-1"
SPENT = TurnUsage(input=3, output=4, cache_write=5, cache_read=6, model="claude-standin")
CLAUDE = HarnessSpec(name="claude", binary="claude", receipts=ReceiptMode.HOOKS, hooks="claude")
CURSOR = HarnessSpec(name="cursor", binary="cursor-agent")
ENTRIES = [
    {"type": "user", "promptId": TURN, "message": {"role": "user", "content": "hello"}},
    {
        "type": "assistant",
        "requestRef": "r-1",
        "message": {
            "model": SPENT.model,
            "content": [{"type": "text", "text": "hi"}],
            "usage": {
                "input_tokens": 3,
                "output_tokens": 4,
                "cache_creation_input_tokens": 5,
                "cache_read_input_tokens": 6,
            },
        },
    },
]
ENDED = {"type": "system", "subtype": "turn_duration", "durationMs": 850}


def write(path: Path, entries: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(entry) + "\n" for entry in entries), encoding="utf-8")
    return path


def end_of(transcript: Path, turn: str = TURN) -> EndedTurn:
    prompt = Receipt(ReceiptKind.PROMPT, key="1", prompt="hello", turn=turn, transcript=str(transcript))
    return EndedTurn(prompt, Receipt(ReceiptKind.TURN_ENDED, key="2", turn=turn, transcript=str(transcript)))


def _real(tmp_path: Path) -> tuple[UsagePort, EndedTurn]:
    transcript = write(tmp_path / "s.jsonl", [*ENTRIES, ENDED])
    return harness_usage({"claude": CLAUDE, "cursor": CURSOR}, usage_readers()), end_of(transcript)


def _fake(tmp_path: Path) -> tuple[UsagePort, EndedTurn]:
    fake = FakeUsage()
    fake.turns[TURN] = SPENT
    return fake, end_of(tmp_path / "s.jsonl")


@pytest.fixture(params=[_real, _fake], ids=["harness-usage", "fake"])
def port(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[UsagePort, EndedTurn]:
    made: Callable[[Path], tuple[UsagePort, EndedTurn]] = request.param
    return made(tmp_path)


def test_a_recorded_turns_usage_is_read(port: tuple[UsagePort, EndedTurn]) -> None:
    usage, end = port
    assert usage.turn_usage("claude", end) == SPENT


def test_a_turn_not_recorded_is_unknown(port: tuple[UsagePort, EndedTurn]) -> None:
    usage, turn = port
    assert isinstance(usage.turn_usage("claude", replace(turn, end=replace(turn.end, turn="p-2"))), UsageUnknown)


def test_a_harness_with_no_reader_is_unknown(tmp_path: Path) -> None:
    usage, end = _real(tmp_path)
    found = usage.turn_usage("cursor", end)
    assert isinstance(found, UsageUnknown) and "no usage reader" in found.reason
    assert isinstance(usage.turn_usage("gone", end), UsageUnknown)


def test_a_turn_not_written_whole_is_read_again_until_its_end_is_written(tmp_path: Path) -> None:
    transcript = write(tmp_path / "s.jsonl", ENTRIES)
    reads: list[float] = []

    def pause(seconds: float) -> None:  # the agent writes the turn's end while the reader waits
        reads.append(seconds)
        write(transcript, [*ENTRIES, ENDED])

    usage = HarnessUsage({"claude": usage_readers()["claude"]}, pause=pause)
    assert usage.turn_usage("claude", end_of(transcript)) == SPENT
    assert len(reads) == 1


def test_a_turn_never_written_whole_is_unknown_once_its_wait_is_over(tmp_path: Path) -> None:
    transcript = write(tmp_path / "s.jsonl", ENTRIES)
    now = [0.0]

    def pause(seconds: float) -> None:
        now[0] += seconds

    usage = HarnessUsage(
        {"claude": usage_readers()["claude"]}, settle_seconds=1.0, monotonic=lambda: now[0], pause=pause
    )
    found = usage.turn_usage("claude", end_of(transcript))
    assert isinstance(found, UsageUnknown) and found.pending
    assert 1.0 <= now[0] < 1.2
