"""The sandbox tracker behaves as a TrackerPort: items, an incremental comment stream, writes."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from adapters.sandbox.db import SANDBOX_SCHEMA
from adapters.sandbox.tracker import SandboxTracker
from domain.errors import StateError, TrackerError
from domain.model import AGENT_MARKER, Comment, CommentKind, ItemState, Reaction
from domain.refs import RepoRef, WorkItemRef
from tests.fakes.clock import FakeClock

ROOT = Path(__file__).resolve().parents[2]
REPO = RepoRef.parse("sandbox/demo")
OTHER_REPO = RepoRef.parse("sandbox/other")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def sandbox(tmp_path: Path, clock: FakeClock) -> Iterator[SandboxTracker]:
    tracker = SandboxTracker(tmp_path / "sandbox.sqlite3", clock=clock.now)
    yield tracker
    tracker.close()


def test_items_are_numbered_per_repository(sandbox: SandboxTracker) -> None:
    refs = [sandbox.create_item(repo, "t") for repo in (REPO, REPO, OTHER_REPO)]
    assert [str(r) for r in refs] == ["github:sandbox/demo#1", "github:sandbox/demo#2", "github:sandbox/other#1"]


def test_work_items_are_the_open_items_carrying_the_label_in_number_order(sandbox: SandboxTracker) -> None:
    labelled = sandbox.create_item(REPO, "first", "body", author="ann", labels=("loop", "bug"))
    sandbox.create_item(REPO, "no label", labels=("bug",))
    closed = sandbox.create_item(REPO, "closed", labels=("loop",))
    sandbox.close_item(closed)
    later = sandbox.create_item(REPO, "later", labels=("loop",))
    sandbox.create_item(OTHER_REPO, "elsewhere", labels=("loop",))
    items = sandbox.work_items(REPO, "loop")
    assert [(i.ref, i.title, i.author, i.labels) for i in items] == [
        (labelled, "first", "ann", frozenset({"loop", "bug"})),
        (later, "later", "demo", frozenset({"loop"})),
    ]


def test_with_no_cursor_the_stream_starts_now(sandbox: SandboxTracker) -> None:
    item = sandbox.create_item(REPO, "t")
    sandbox.add_comment(item, "history")
    batch = sandbox.new_comments(REPO, None)
    sandbox.add_comment(item, "news")
    assert (batch.comments, [c.body for c in sandbox.new_comments(REPO, batch.cursor).comments]) == ((), ["news"])


def poll(sandbox: SandboxTracker, repo: RepoRef, cursor: str | None) -> tuple[list[str], str | None]:
    batch = sandbox.new_comments(repo, cursor)
    return [c.body for c in batch.comments], batch.cursor


def test_new_comments_come_oldest_first_and_each_only_once(sandbox: SandboxTracker) -> None:
    item = sandbox.create_item(REPO, "t")
    _, cursor = poll(sandbox, REPO, None)
    for body in ("one", "two", "three"):
        sandbox.add_comment(item, body)
    first, cursor = poll(sandbox, REPO, cursor)
    sandbox.add_comment(item, "four")
    second, cursor = poll(sandbox, REPO, cursor)
    third, _ = poll(sandbox, REPO, cursor)
    assert (first, second, third) == (["one", "two", "three"], ["four"], [])


def test_new_comments_are_only_those_of_the_repository_asked_about(sandbox: SandboxTracker) -> None:
    here, there = sandbox.create_item(REPO, "t"), sandbox.create_item(OTHER_REPO, "t")
    _, cursor = poll(sandbox, REPO, None)
    sandbox.add_comment(there, "not yours")
    sandbox.add_comment(here, "yours")
    assert poll(sandbox, REPO, cursor)[0] == ["yours"]


def test_a_comment_keeps_its_author_time_and_untrusted_text_exactly(sandbox: SandboxTracker, clock: FakeClock) -> None:
    item = sandbox.create_item(REPO, "t")
    hostile = "\x1b[201~\x00\r\n\u009b ✓ 🎉 '); DROP TABLE comments; --"
    sandbox.add_comment(item, hostile, author="mallory")
    [stored] = sandbox.comments(item)
    assert (stored.author, stored.body, stored.created_at, stored.item) == ("mallory", hostile, clock.now(), item)


def test_item_state_tells_open_unlabeled_closed_and_merged(sandbox: SandboxTracker) -> None:
    refs = [sandbox.create_item(REPO, "t", labels=("loop",)) for _ in range(4)]
    sandbox.set_labels(refs[1], ())
    sandbox.close_item(refs[2])
    sandbox.close_item(refs[3], ItemState.MERGED)
    assert [sandbox.item_state(r, "loop") for r in refs] == [
        ItemState.OPEN,
        ItemState.UNLABELED,
        ItemState.CLOSED,
        ItemState.MERGED,
    ]


def test_the_state_of_an_unknown_item_is_a_tracker_error(sandbox: SandboxTracker) -> None:
    with pytest.raises(TrackerError, match="sandbox/demo"):
        sandbox.item_state(WorkItemRef(REPO, 99), "loop")


def test_reactions_are_stored_in_order(sandbox: SandboxTracker) -> None:
    comment = sandbox.add_comment(sandbox.create_item(REPO, "t"), "hi")
    sandbox.react(comment, Reaction.STARTED)
    sandbox.react(comment, Reaction.SUCCEEDED)
    assert sandbox.reactions() == [(comment.id, Reaction.STARTED), (comment.id, Reaction.SUCCEEDED)]


def test_a_reaction_on_an_unknown_comment_is_a_tracker_error_and_stores_nothing(sandbox: SandboxTracker) -> None:
    item = sandbox.create_item(REPO, "t")
    ghost = Comment(id="404", item=item, author="x", body="", created_at=FakeClock().now())
    with pytest.raises(TrackerError):
        sandbox.react(ghost, Reaction.FAILED)
    assert sandbox.reactions() == []


def test_a_posted_comment_is_listed_and_appears_in_the_stream_as_ours(sandbox: SandboxTracker) -> None:
    item = sandbox.create_item(REPO, "t")
    cursor = sandbox.new_comments(REPO, None).cursor
    sandbox.post_comment(item, f"{AGENT_MARKER}\nnotice")
    [streamed] = sandbox.new_comments(REPO, cursor).comments
    assert ([c.body for c in sandbox.posted()], streamed.author, streamed.is_ours) == (
        [f"{AGENT_MARKER}\nnotice"],
        "the-loop",
        True,
    )


def test_posting_on_an_unknown_item_is_a_tracker_error_and_writes_nothing(sandbox: SandboxTracker) -> None:
    sandbox.create_item(REPO, "t")
    with pytest.raises(TrackerError):
        sandbox.post_comment(WorkItemRef(REPO, 7), "notice")
    assert sandbox.new_comments(REPO, "0").comments == ()


def test_a_cursor_this_tracker_did_not_issue_is_a_tracker_error(sandbox: SandboxTracker) -> None:
    with pytest.raises(TrackerError, match="cursor"):
        sandbox.new_comments(REPO, "etag:abc")


def test_list_items_shows_every_item_with_its_state(sandbox: SandboxTracker) -> None:
    first, second = sandbox.create_item(REPO, "a"), sandbox.create_item(OTHER_REPO, "b")
    sandbox.close_item(second)
    assert [(e.item.ref, e.state) for e in sandbox.list_items()] == [
        (first, ItemState.OPEN),
        (second, ItemState.CLOSED),
    ]


COMMENTER = """
import sys
from datetime import UTC, datetime
from pathlib import Path
from adapters.sandbox.tracker import SandboxTracker
from domain.refs import WorkItemRef
sandbox = SandboxTracker(Path(sys.argv[1]), clock=lambda: datetime.now(UTC))
for n in range(int(sys.argv[2])):
    sandbox.add_comment(WorkItemRef.parse(sys.argv[3]), f"{sys.argv[4]}-{n}")
"""


def test_comments_added_by_other_processes_while_polling_arrive_once_each(sandbox: SandboxTracker) -> None:
    item = sandbox.create_item(REPO, "t")
    cursor = sandbox.new_comments(REPO, None).cursor
    argv = [sys.executable, "-c", COMMENTER, str(sandbox.path), "40", str(item)]
    writers = [subprocess.Popen([*argv, name], cwd=ROOT) for name in "ab"]
    seen: list[str] = []
    while any(w.poll() is None for w in writers):
        bodies, cursor = poll(sandbox, REPO, cursor)
        seen += bodies
        time.sleep(0.01)  # pacing only: the assertion is on what arrived, not when
    seen += poll(sandbox, REPO, cursor)[0]
    in_order = {name: [b for b in seen if b.startswith(f"{name}-")] for name in "ab"}
    assert ([w.returncode for w in writers], len(seen), in_order) == (
        [0, 0],
        80,
        {name: [f"{name}-{n}" for n in range(40)] for name in "ab"},
    )


def test_a_sandbox_file_that_is_not_a_database_is_refused_naming_it_and_left_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "sandbox.sqlite3"
    path.write_bytes(b"not a database" * 100)
    with pytest.raises(StateError) as refused:
        SandboxTracker(path, clock=FakeClock().now)
    assert (str(path) in str(refused.value), path.read_bytes()) == (True, b"not a database" * 100)


VERSION_1 = (
    "CREATE TABLE items (repo TEXT NOT NULL, number INTEGER NOT NULL, item TEXT NOT NULL UNIQUE, title TEXT NOT NULL,"
    " body TEXT NOT NULL, author TEXT, labels TEXT NOT NULL, kind TEXT NOT NULL, state TEXT NOT NULL,"
    " PRIMARY KEY (repo, number))",
    "CREATE TABLE comments (seq INTEGER PRIMARY KEY AUTOINCREMENT, item TEXT NOT NULL, repo TEXT NOT NULL,"
    " author TEXT, body TEXT NOT NULL, created_at TEXT NOT NULL, kind TEXT NOT NULL, path TEXT, line INTEGER)",
    "CREATE INDEX comments_by_repo ON comments (repo, seq)",
    "CREATE TABLE reactions (comment_id TEXT NOT NULL, reaction TEXT NOT NULL)",
    "INSERT INTO items VALUES ('github.com/sandbox/demo', 1, 'github:sandbox/demo#1', 't', '', 'demo',"
    " '[\"loop\"]', 'issue', 'open')",
    "INSERT INTO comments (item, repo, author, body, created_at, kind)"
    " VALUES ('github:sandbox/demo#1', 'github.com/sandbox/demo', 'demo', 'old', '2026-11-30T08:00:00+00:00',"
    " 'issue_comment')",
    "PRAGMA user_version = 1",
)


def test_a_version_1_sandbox_file_is_migrated_and_its_items_are_armed_when_first_asked(
    tmp_path: Path, clock: FakeClock
) -> None:
    path = tmp_path / "sandbox.sqlite3"
    with sqlite3.connect(path) as db:
        for statement in VERSION_1:
            db.execute(statement)
    sandbox = SandboxTracker(path, clock=clock.now)
    [item] = sandbox.work_items(REPO, "loop")
    before = sandbox.arming(item, "loop")
    clock.advance(1)
    news = sandbox.add_comment(item.ref, "news")
    after = sandbox.arming(item, "loop")
    sandbox.close()
    with sqlite3.connect(path) as db:
        version = db.execute("PRAGMA user_version").fetchone()[0]
    assert (version, before.armed_at, before.comments) == (5, clock.now() - timedelta(seconds=1), ())
    assert [c.id for c in after.comments] == [news.id]


def test_an_edit_recorded_before_editors_were_kept_reads_as_its_authors(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "sandbox.sqlite3"
    with sqlite3.connect(path) as db:
        for statement in VERSION_1:
            db.execute(statement)
        for statement in SANDBOX_SCHEMA.migrations[0]:  # to version 2, which kept an edit's time only
            db.execute(statement)
        db.execute("PRAGMA user_version = 2")
        db.execute("UPDATE comments SET updated_at = '2026-11-30T08:05:00+00:00'")
    sandbox = SandboxTracker(path, clock=clock.now)
    [item] = sandbox.work_items(REPO, "loop")
    found = sandbox.comment(item.ref, "1", CommentKind.ISSUE_COMMENT)
    sandbox.close()
    assert found is not None and (found.edited, found.editor) == (True, "demo")


def test_faults_a_comment_made_after_the_clock_was_set_back_an_hour_is_still_new(
    sandbox: SandboxTracker, clock: FakeClock
) -> None:
    """Fault: the sandbox's clock is the machine's. Set back, it must not stamp a new
    comment before the item's label (GitHub's clock never goes back when ours does): such a
    comment would read as history, and be lost."""
    ref = sandbox.create_item(REPO, "armed", labels=("loop",))
    clock.jump(-3600)
    said = sandbox.add_comment(ref, "said after the jump")

    arming = sandbox.arming(sandbox.work_items(REPO, "loop")[0], "loop")

    assert said.created_at >= arming.armed_at and [c.id for c in arming.comments] == [said.id]
