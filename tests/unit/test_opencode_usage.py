"""opencode's usage of one turn, read from messages in the shape the pinned binary stores them
(tests/opencode/test_opencode_usage_facts.py), trimmed to the fields that matter, in a store of its
tables' shape."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from adapters.harnesses.opencode.store import Stored
from adapters.harnesses.opencode.usage import of_prompt, usage
from domain.receipts import EndedTurn, Receipt, ReceiptKind
from domain.usage import TurnUsage, UsageUnknown

PROMPT, QUEUED = "msg_24f4b90d9001M2LLPVfvuoDwME", "msg_24f4baf26001dg1nxzD5l403cI"
SESSION = "ses_db0b46faaffe6JJXsxQeAYbz3z"


def tokens(fresh: int, output: int, reasoning: int = 0, read: int = 0, written: int = 0) -> dict[str, Any]:
    total = fresh + output + reasoning + read + written
    return {
        "total": total,
        "input": fresh,
        "output": output,
        "reasoning": reasoning,
        "cache": {"write": written, "read": read},
    }


def user(message_id: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "time": {"created": 1}, "agent": "build"}


def answer(
    number: int, prompt: str, counts: dict[str, Any], finish: str = "stop", model: str = "standin-model"
) -> dict[str, Any]:
    return {
        "id": f"msg_answer{number}",
        "parentID": prompt,
        "role": "assistant",
        "mode": "build",
        "cost": 0,
        "tokens": counts,
        "modelID": model,
        "providerID": "standin",
        "time": {"created": 2, "completed": 3},
        "finish": finish,
    }


CALL, DONE = tokens(200, 33, 7, read=300), tokens(100, 49, 11, read=800)
TURN = [user(PROMPT), answer(1, PROMPT, CALL, "tool-calls"), answer(2, PROMPT, DONE)]
SPENT = TurnUsage(input=300, output=100, cache_write=0, cache_read=1100, model="standin-model")


def read(messages: list[dict[str, Any]], subagents: int = 0) -> Any:
    return of_prompt(Stored(messages, subagents), PROMPT)


def test_a_turns_requests_are_summed_with_the_reasoning_in_the_output() -> None:
    assert read(TURN) == SPENT


def test_tokens_written_to_the_cache_are_said_apart_from_the_input() -> None:
    written = [user(PROMPT), answer(1, PROMPT, tokens(10, 5, read=20, written=30))]
    assert read(written) == TurnUsage(input=10, output=5, cache_write=30, cache_read=20, model="standin-model")


def test_the_models_that_answered_are_named_in_the_order_they_first_did() -> None:
    models = [user(PROMPT), answer(1, PROMPT, CALL, "tool-calls", "a"), answer(2, PROMPT, DONE, model="b")]
    assert read(models) == TurnUsage(input=300, output=100, cache_write=0, cache_read=1100, model="a, b")


def test_a_prompt_queued_meanwhile_is_answered_under_its_own_message_and_not_counted() -> None:
    assert read([*TURN, user(QUEUED), answer(3, QUEUED, tokens(1000, 30, read=1000))]) == SPENT


def test_a_prompt_answered_only_under_a_later_prompt_is_unknown() -> None:
    found = read([user(PROMPT), user(QUEUED), answer(1, QUEUED, DONE)])
    assert found == UsageUnknown("its prompt was answered in a later prompt's turn")


def test_a_run_that_went_on_under_a_later_prompt_is_unknown() -> None:
    found = read([user(PROMPT), answer(1, PROMPT, CALL, "tool-calls"), user(QUEUED), answer(2, QUEUED, DONE)])
    assert isinstance(found, UsageUnknown) and not found.pending


@pytest.mark.parametrize(
    "messages",
    [
        [user(PROMPT)],  # its first request not stored yet
        [user(PROMPT), answer(1, PROMPT, CALL, "tool-calls")],  # its next request not stored yet
        [user(PROMPT), answer(1, PROMPT, CALL, "tool-calls"), {**answer(2, PROMPT, DONE), "time": {"created": 2}}],
    ],
)
def test_a_turn_not_written_whole_yet_is_pending(messages: list[dict[str, Any]]) -> None:
    found = read(messages)
    assert isinstance(found, UsageUnknown) and found.pending


@pytest.mark.parametrize(
    "changed",
    [
        {"error": {"name": "MessageAbortedError", "data": {"message": "aborted"}}},  # cut short
        {"tokens": {k: v for k, v in DONE.items() if k != "cache"}},
        {"tokens": {**DONE, "output": -1}},
        {"tokens": {**DONE, "reasoning": True}},
        {"tokens": {**DONE, "total": None}},
        {"tokens": {**DONE, "input": 0}},  # opencode keeps 0 where a provider's cached tokens exceed its input
        {"tokens": "many"},
        {"time": "now"},
    ],
)
def test_a_request_of_a_shape_not_pinned_or_cut_short_makes_its_turn_unknown(changed: dict[str, Any]) -> None:
    found = read([user(PROMPT), answer(1, PROMPT, CALL, "tool-calls"), {**answer(2, PROMPT, DONE), **changed}])
    assert isinstance(found, UsageUnknown)
    assert not found.pending or changed == {"time": "now"}  # a time not pinned reads as not completed


def test_a_turn_that_ran_a_subagent_is_unknown() -> None:
    found = read(TURN, subagents=1)
    assert isinstance(found, UsageUnknown) and "subagent" in found.reason and not found.pending


# the store: the tables the pinned binary keeps, trimmed to the columns read


def store(folder: Path, messages: list[dict[str, Any]], *, session: str = SESSION) -> Path:
    path = folder / "opencode.db"
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE message (id text PRIMARY KEY, session_id text, time_created integer, data text)")
        db.execute("CREATE TABLE session (id text PRIMARY KEY, parent_id text, time_created integer)")
        db.execute("INSERT INTO session VALUES (?, NULL, 0)", (session,))
        for number, message in enumerate(messages, 1):
            data = {k: v for k, v in message.items() if k != "id"}
            db.execute("INSERT INTO message VALUES (?, ?, ?, ?)", (message["id"], session, number, json.dumps(data)))
    return path


def ended(path: str | Path, prompt: str = PROMPT, end: str = PROMPT) -> EndedTurn:
    return EndedTurn(
        Receipt(ReceiptKind.PROMPT, "1", conversation=SESSION, turn=prompt, transcript=str(path)),
        Receipt(ReceiptKind.TURN_ENDED, "2", conversation=SESSION, turn=end, transcript=str(path)),
    )


def test_a_turn_is_read_from_the_store_its_end_names(tmp_path: Path) -> None:
    earlier = [user("msg_0"), answer(0, "msg_0", tokens(5000, 5000))]
    assert usage(ended(store(tmp_path, [*earlier, *TURN]))) == SPENT


def test_a_subagents_session_started_since_the_prompt_makes_its_turn_unknown(tmp_path: Path) -> None:
    path = store(tmp_path, TURN)
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("INSERT INTO session VALUES ('ses_child', ?, 2)", (SESSION,))
    found = usage(ended(path))
    assert isinstance(found, UsageUnknown) and "subagent" in found.reason


def test_a_prompt_not_in_the_store_yet_is_pending(tmp_path: Path) -> None:
    found = usage(ended(store(tmp_path, [user("msg_0")])))
    assert isinstance(found, UsageUnknown) and found.pending


def test_an_end_that_names_another_prompt_than_its_own_is_unknown(tmp_path: Path) -> None:
    found = usage(ended(store(tmp_path, TURN), prompt="msg_other"))
    assert found == UsageUnknown("its end names another prompt than its own")


@pytest.mark.parametrize("path", ["", "relative/opencode.db", "/no/such/opencode.db", "{folder}"])
def test_a_store_that_cannot_be_read_is_unknown(tmp_path: Path, path: str) -> None:
    found = usage(ended(path.format(folder=tmp_path)))
    assert isinstance(found, UsageUnknown) and not found.pending


def test_a_file_that_is_no_store_is_unknown(tmp_path: Path) -> None:
    path = tmp_path / "opencode.db"
    path.write_text("not a database", encoding="utf-8")
    found = usage(ended(path))
    assert isinstance(found, UsageUnknown) and not found.pending


def test_a_message_that_is_not_json_is_unknown(tmp_path: Path) -> None:
    path = store(tmp_path, TURN)
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE message SET data = '{not json' WHERE id = 'msg_answer2'")
    found = usage(ended(path))
    assert isinstance(found, UsageUnknown) and not found.pending
