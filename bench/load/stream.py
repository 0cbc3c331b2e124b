"""The comment stream: a steady rate of comments on the items with sessions, every other one also
announced by webhook, each with when it came to exist and by which ingress."""

from __future__ import annotations

import enum
import random
import time
from dataclasses import dataclass

from bench.load.github import LoadGitHub, Target


class Ingress(enum.Enum):
    POLL = "poll"  # only the poll stream brings it
    WEBHOOK = "webhook"  # a signed delivery announces it too (the poll stream still sees it)


@dataclass(frozen=True, slots=True)
class Sent:
    delivery: str
    ingress: Ingress
    created: float  # wall clock, when the stand-in held it


def stream(github: LoadGitHub, *, port: int, rate: float, seconds: float, seed: int = 11) -> list[Sent]:
    """`rate` comments a second for `seconds`, spread over the targets at random; on a pull request
    every other one is a review comment. A refused webhook delivery stops the run: it is a defect."""
    chooser = random.Random(seed)
    sent: list[Sent] = []
    started = time.monotonic()
    for index in range(round(rate * seconds)):
        time.sleep(max(0.0, started + index / rate - time.monotonic()))
        target: Target = chooser.choice(github.targets)
        review = target.pull_request and index % 4 < 2
        ingress = Ingress.WEBHOOK if index % 2 else Ingress.POLL
        note, created = github.comment(target, f"load comment {index}: please carry on", review=review)
        if ingress is Ingress.WEBHOOK and (status := github.announce(port, target, note)) != 202:
            raise RuntimeError(f"the webhook receiver answered {status} to comment {note.id}")
        sent.append(Sent(f"poll-comment-{note.id}", ingress, created))
    return sent
