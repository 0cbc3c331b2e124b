"""One way to arrange a tracker's world and read it back, for the fake and for gh on the stand-in."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import pytest

from adapters.github import GhTracker
from adapters.github.tracker import DEFAULT_REACTIONS
from domain.authorize import Permission
from domain.model import CommentKind, ItemKind, ItemState, Reaction
from domain.ports import TrackerPort
from domain.refs import RepoRef, WorkItemRef
from tests.fakes.tracker import FakeTracker
from tests.github_standin import StandIn

LABEL = "loop"
BOT = "the-loop-bot"
_CONTENT = {content: reaction for reaction, content in DEFAULT_REACTIONS.items()}


@pytest.fixture(scope="module")
def standin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandIn]:
    """One stand-in per test module (each test resets its world), with the real gh in front."""
    require_gh()
    server = StandIn(Path(tmp_path_factory.mktemp("standin")))
    yield server
    server.close()


def require_gh() -> None:
    if shutil.which("gh") is None:
        pytest.skip("SKIPPED LOUDLY: the gh binary is not installed (CI installs it)")


class Rig(Protocol):
    tracker: TrackerPort
    repo: RepoRef

    def item(self, number: int, *, labels: tuple[str, ...] = (LABEL,), pull: bool = False) -> WorkItemRef: ...
    def pull(self, number: int, *, head: str | None, sha: str) -> WorkItemRef:
        """A labelled pull request whose head is `sha` in `head` (None: the repository itself; "": a
        deleted fork)."""

    def comment(
        self,
        number: int,
        body: str,
        *,
        author: str = "alice",
        review: bool = False,
        path: str | None = None,
        line: int | None = None,
    ) -> str: ...
    def edit(self, comment_id: str, body: str, *, editor: str | None = None) -> None: ...
    def delete(self, comment_id: str) -> None: ...
    def close(self, number: int, *, merged: bool = False) -> None: ...
    def relabel(self, number: int, labels: tuple[str, ...]) -> None: ...
    def later(self) -> None: ...
    def reactions(self) -> list[tuple[str, Reaction]]: ...
    def posted(self) -> list[tuple[int, str]]: ...
    def grant(self, login: str, permission: Permission) -> None:
        """`login` is a collaborator of the rig's repository with `permission`."""

    def break_reads(self) -> None: ...
    def break_writes(self) -> None: ...
    def limit(self, until: float) -> None: ...


class FakeRig:
    def __init__(self) -> None:
        self.fake = FakeTracker(login=BOT)
        self.tracker: TrackerPort = self.fake
        self.repo = RepoRef.parse("acme/widgets")

    def item(self, number: int, *, labels: tuple[str, ...] = (LABEL,), pull: bool = False) -> WorkItemRef:
        ref = WorkItemRef(self.repo, number)
        self.fake.add_item(ref, labels=labels, kind=ItemKind.PULL_REQUEST if pull else ItemKind.ISSUE)
        return ref

    def pull(self, number: int, *, head: str | None, sha: str) -> WorkItemRef:
        ref = WorkItemRef(self.repo, number)
        self.fake.add_item(ref, kind=ItemKind.PULL_REQUEST, head=head, sha=sha)
        return ref

    def comment(
        self,
        number: int,
        body: str,
        *,
        author: str = "alice",
        review: bool = False,
        path: str | None = None,
        line: int | None = None,
    ) -> str:
        kind = CommentKind.REVIEW_COMMENT if review else CommentKind.ISSUE_COMMENT
        ref = WorkItemRef(self.repo, number)
        return self.fake.add_comment(ref, body, author=author, kind=kind, path=path, line=line).id

    def edit(self, comment_id: str, body: str, *, editor: str | None = None) -> None:
        self.fake.edit_comment(comment_id, body, editor=editor)

    def delete(self, comment_id: str) -> None:
        self.fake.delete_comment(comment_id)

    def close(self, number: int, *, merged: bool = False) -> None:
        self.fake.set_state(WorkItemRef(self.repo, number), ItemState.MERGED if merged else ItemState.CLOSED)

    def relabel(self, number: int, labels: tuple[str, ...]) -> None:
        self.fake.set_labels(WorkItemRef(self.repo, number), labels)

    def later(self) -> None:
        pass  # the fake's comment times increase by themselves

    def reactions(self) -> list[tuple[str, Reaction]]:
        return list(self.fake.reactions)

    def posted(self) -> list[tuple[int, str]]:
        return [(ref.number, body) for ref, body in self.fake.posted]

    def grant(self, login: str, permission: Permission) -> None:
        self.fake.grant(self.repo, login, permission)

    def break_reads(self) -> None:
        self.fake.fail_reads.add(self.repo)

    def break_writes(self) -> None:
        self.fake.fail_posts = self.fake.fail_reactions = True

    def limit(self, until: float) -> None:
        self.fake.rate_limited_until[self.repo] = until


class GhRig:
    def __init__(self, standin: StandIn) -> None:
        self.world = standin.reset()
        self.world.login = BOT
        self.repo = RepoRef.parse("acme/widgets", host=standin.host)
        self.world.add_repo(self.repo.full_name)
        world = self.world

        def github_now() -> float:  # world.now is replaced as the world ticks
            return world.now.timestamp()

        # the machine's clock reads as GitHub's here: a limit's reset is then the same moment on both
        self.tracker: TrackerPort = GhTracker(host=standin.host, env=standin.gh_env(), timeout=20, clock=github_now)

    def item(self, number: int, *, labels: tuple[str, ...] = (LABEL,), pull: bool = False) -> WorkItemRef:
        self.world.add_issue(self.repo.full_name, number, labels=labels, pull_request=pull)
        return WorkItemRef(self.repo, number)

    def pull(self, number: int, *, head: str | None, sha: str) -> WorkItemRef:
        issue = self.world.add_issue(self.repo.full_name, number, pull_request=True)
        issue.head_repo, issue.head_sha = head, sha
        return WorkItemRef(self.repo, number)

    def comment(
        self,
        number: int,
        body: str,
        *,
        author: str = "alice",
        review: bool = False,
        path: str | None = None,
        line: int | None = None,
    ) -> str:
        note = self.world.add_comment(
            self.repo.full_name, number, body, author=author, review=review, path=path, line=line
        )
        return str(note.id)

    def edit(self, comment_id: str, body: str, *, editor: str | None = None) -> None:
        self.world.edit_comment(self.repo.full_name, int(comment_id), body, editor=editor)

    def delete(self, comment_id: str) -> None:
        self.world.delete_comment(self.repo.full_name, int(comment_id))

    def close(self, number: int, *, merged: bool = False) -> None:
        self.world.close(self.repo.full_name, number, merged=merged)

    def relabel(self, number: int, labels: tuple[str, ...]) -> None:
        self.world.set_labels(self.repo.full_name, number, labels)

    def later(self) -> None:
        self.world.tick()

    def reactions(self) -> list[tuple[str, Reaction]]:
        return [(str(cid), _CONTENT[content]) for _, cid, content in self.world.reactions]

    def posted(self) -> list[tuple[int, str]]:
        return [(number, body) for _, number, body in self.world.posted]

    def grant(self, login: str, permission: Permission) -> None:
        self.world.grant(self.repo.full_name, login, permission.value)

    def break_reads(self) -> None:
        self.world.fail(f"/repos/{self.repo.full_name}", method="GET", status=500, times=None)

    def break_writes(self) -> None:
        self.world.fail(f"/repos/{self.repo.full_name}", method="POST", status=502, times=None)
        self.world.fail(f"/repos/{self.repo.full_name}", method="PATCH", status=502, times=None)

    def limit(self, until: float) -> None:
        headers = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(until))}
        body = b'{"message": "API rate limit exceeded"}'
        self.world.fail("/repos/", status=403, headers=headers, body=body, times=None)
