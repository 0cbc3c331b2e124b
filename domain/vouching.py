"""What a vouch covers: a fork's worktree counts as vouched for only while it holds exactly the
vouched commit, or was made (or found) so, is still at it, and only harnesses started plainly at it
ran in it since."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from domain.policy import Decision

SHORT = 12


@dataclass(frozen=True, slots=True)
class Checkout:
    """What a worktree holds, as git tells it: its HEAD ("": git could not tell), and whether that is
    all of it — no change, no untracked or ignored file, no edit `git status` hides."""

    head: str
    only_head: bool


class VouchedTree(enum.Enum):
    PLAIN = "plain"  # it holds only what the vouch covers: the harness starts with its folder's settings
    REMAKE = "remake"  # made again from the vouched commit first: nothing in it would be lost
    UNVOUCHED = "unvouched"  # kept as it is; its harness starts without its folder's settings


def vouched_tree_decision(
    commit: str, *, marked: bool, checkout: Checkout, discard: Decision[bool]
) -> Decision[VouchedTree]:
    """May a harness start plainly in a fork's existing worktree now that the operator vouched for
    `commit`? A harness reads its folder's settings, hooks and MCP servers from whatever is there —
    an earlier head's files, or what an agent started without them wrote — so only a worktree
    holding just the vouched commit is covered (`marked`: so made or found, and nothing unvouched
    ran in it since: what a vouched agent wrote there stays covered, but not another head it
    checked out, whose files are not the vouched ones). Any other is made again when `discard`
    says nothing would be lost."""
    if marked and checkout.head == commit:
        return Decision(VouchedTree.PLAIN, f"its worktree was made at the vouched {commit[:SHORT]}")
    if checkout.head == commit and checkout.only_head:
        return Decision(VouchedTree.PLAIN, f"its worktree holds only the vouched {commit[:SHORT]}")
    if not checkout.head:
        held = "its folder's content cannot be told to be the vouched commit"
    elif checkout.head != commit:
        held = f"its worktree is at {checkout.head[:SHORT]}, not the vouched {commit[:SHORT]}"
    else:
        held = f"its worktree holds files besides the vouched {commit[:SHORT]}"
    if discard.choice:
        return Decision(VouchedTree.REMAKE, f"{held}: made again from the vouched commit")
    return Decision(
        VouchedTree.UNVOUCHED,
        f"{held}, and making it again would lose what it holds ({discard.reason}): the harness starts "
        "without its folder's settings until that is pushed or removed",
    )
