"""The tracker contract's rig for the sandbox tracker: its world is a SQLite file."""

from __future__ import annotations

from pathlib import Path

from adapters.sandbox.tracker import SandboxTracker
from domain.authorize import Permission
from domain.model import CommentKind, ItemKind, ItemState, Reaction
from domain.ports import TrackerPort
from domain.refs import RepoRef, WorkItemRef
from tests.fakes.clock import FakeClock

LABEL = "loop"


class SandboxRig:
    def __init__(self, path: Path, *, login: str) -> None:
        self.clock = FakeClock()
        self.sandbox = SandboxTracker(path, clock=self.clock.now, login=login)
        self.tracker: TrackerPort = self.sandbox
        self.repo = RepoRef.parse("acme/widgets")
        # a second handle on the same file: reads back what landed even after the first broke
        self._witness = SandboxTracker(path, clock=self.clock.now, login=login)

    def item(self, number: int, *, labels: tuple[str, ...] = (LABEL,), pull: bool = False) -> WorkItemRef:
        kind = ItemKind.PULL_REQUEST if pull else ItemKind.ISSUE
        return self.sandbox.create_item(self.repo, f"item {number}", labels=labels, kind=kind, number=number)

    def pull(self, number: int, *, head: str | None, sha: str) -> WorkItemRef:
        kind = ItemKind.PULL_REQUEST
        return self.sandbox.create_item(
            self.repo, f"item {number}", labels=(LABEL,), kind=kind, number=number, head_repo=head, head_sha=sha
        )

    def comment(self, number: int, body: str, *, author: str = "alice", review: bool = False,
                path: str | None = None, line: int | None = None) -> str:  # fmt: skip
        kind = CommentKind.REVIEW_COMMENT if review else CommentKind.ISSUE_COMMENT
        ref = WorkItemRef(self.repo, number)
        return self.sandbox.add_comment(ref, body, author, kind=kind, path=path, line=line).id

    def edit(self, comment_id: str, body: str, *, editor: str | None = None) -> None:
        self.sandbox.edit_comment(comment_id, body, editor=editor)

    def delete(self, comment_id: str) -> None:
        self.sandbox.delete_comment(comment_id)

    def close(self, number: int, *, merged: bool = False) -> None:
        self.sandbox.close_item(WorkItemRef(self.repo, number), ItemState.MERGED if merged else ItemState.CLOSED)

    def relabel(self, number: int, labels: tuple[str, ...]) -> None:
        self.sandbox.set_labels(WorkItemRef(self.repo, number), labels)

    def later(self) -> None:
        self.clock.advance(1)

    def reactions(self) -> list[tuple[str, Reaction]]:
        return self._witness.reactions()

    def posted(self) -> list[tuple[int, str]]:
        return [(c.item.number, c.body) for c in self._witness.posted()]

    def grant(self, login: str, permission: Permission) -> None:
        self.sandbox.grant(self.repo, login, permission)

    def break_reads(self) -> None:
        self.sandbox.close()  # its one way to fail: the database cannot be used

    def break_writes(self) -> None:
        self.sandbox.close()

    def limit(self, until: float) -> None:
        raise AssertionError("the sandbox has no rate limit to model; the contract does not ask it to")
