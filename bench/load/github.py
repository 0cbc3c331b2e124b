"""The load campaign's GitHub: the stand-in holding the items, on the wall clock, and its comments
(each one also announced by a signed webhook delivery when it arrives by that ingress)."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
import urllib.request
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.github_standin import StandIn
from tests.github_standin.routes import Routes
from tests.github_standin.world import Note

LABEL = "loop"
AUTHORIZED, STRANGER = "alice", "bob"
PULL_EVERY = 10  # one item in ten is a pull request


def wall_clock() -> float:
    return time.time()  # noqa: TID251 - the harnesses' records are on this clock too


@dataclass(frozen=True, slots=True)
class Target:
    """An item with a session: where comments of the stream go."""

    repo: str
    number: int
    pull_request: bool


class LoadGitHub:
    """`items` labelled items over `repos` repositories; the first `sessions` (spread over the
    repositories) are by an authorized author, so each gets a session; the others by a stranger."""

    def __init__(self, folder: Path, *, repos: int, items: int, sessions: int, secret: str) -> None:
        self.standin = StandIn(folder)
        self.world = self.standin.world
        self.secret = secret.encode()
        self.repos = [f"acme/repo{r}" for r in range(repos)]
        self.targets: list[Target] = []
        self._stop = threading.Event()
        self.world.now = _second(wall_clock()) - timedelta(hours=2)  # the items are old news
        for index in range(items):
            repo, number = self.repos[index % repos], index // repos + 1
            pull = number % PULL_EVERY == 0
            author = AUTHORIZED if index < sessions else STRANGER
            self.world.add_issue(repo, number, author=author, pull_request=pull)
            if author == AUTHORIZED:
                self.targets.append(Target(repo, number, pull))
        self._sync()
        self._ticker = threading.Thread(target=self._follow, name="standin-clock", daemon=True)
        self._ticker.start()

    @property
    def host(self) -> str:
        return self.standin.host

    def comment(self, target: Target, body: str, *, review: bool) -> tuple[Note, float]:
        """A new comment on GitHub, and when (wall clock) it came to exist."""
        with self.world.lock:
            self._sync()
            path, line = ("src/load.py", 1) if review else (None, None)
            note = self.world.add_comment(
                target.repo, target.number, body, author=AUTHORIZED, review=review, path=path, line=line
            )
            return note, wall_clock()

    def announce(self, port: int, target: Target, note: Note) -> int:
        """GitHub's webhook delivery of `note`, signed; the receiver's HTTP status."""
        with self.world.lock:
            routes = Routes(self.world)
            repo = self.world.repos[target.repo]
            payload = {
                "action": "created",
                "repository": {"full_name": target.repo},
                # as GitHub's: the item under `pull_request` for a review comment, its labels with it
                "pull_request" if note.review else "issue": routes.issue_json(repo, repo.issues[target.number]),
                "comment": routes.note_json(repo, note),
            }
        body = json.dumps(payload).encode()
        event = "pull_request_review_comment" if note.review else "issue_comment"
        signature = "sha256=" + hmac.new(self.secret, body, hashlib.sha256).hexdigest()
        headers = {"X-GitHub-Event": event, "X-Hub-Signature-256": signature, "Content-Type": "application/json"}
        request = urllib.request.Request(f"http://127.0.0.1:{port}/", data=body, method="POST", headers=headers)
        with urllib.request.urlopen(request, timeout=30) as reply:
            return int(reply.status)

    def counters(self) -> tuple[int, int]:
        """Requests served so far, and how many of them cost rate limit (all but the 304s)."""
        with self.world.lock:
            return self.world.requests, self.world.requests - self.world.not_modified

    def close(self) -> None:
        self._stop.set()
        self._ticker.join()
        self.standin.close()

    def _follow(self) -> None:
        while not self._stop.wait(0.1):
            with self.world.lock:
                self._sync()

    def _sync(self) -> None:
        """The stand-in's clock (its `Date` header, every time stamp) is the wall clock, whole seconds."""
        self.world.now = max(self.world.now, _second(wall_clock()))


def _second(epoch: float) -> datetime:
    return datetime.fromtimestamp(int(epoch), UTC)
