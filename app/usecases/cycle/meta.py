"""The state store's small named values (its `meta`): what they are called, and how they read.
A value here has no version: the last write wins, so a write never loses to another writer and
has no `StaleWrite` for the unit of work's save to settle."""

from __future__ import annotations

from datetime import datetime

from domain.ports import StateStore
from domain.refs import RepoRef, WorkItemRef


def watch_start_key(repo: RepoRef) -> str:
    return f"watch-start:{repo.host}/{repo.owner}/{repo.name}"


def read_through_key(repo: RepoRef) -> str:
    """When the last read of `repo`'s comments that moved its cursor began (our clock): every
    comment written well before then has reached the inbox."""
    return f"read-through:{repo.host}/{repo.owner}/{repo.name}"


def armed_floor_key(item: WorkItemRef) -> str:
    return f"armed-floor:{item}"


def moment(store: StateStore, key: str) -> datetime | None:
    found = store.meta().get(key)
    return datetime.fromisoformat(found) if found else None


def watch_start(store: StateStore, repo: RepoRef) -> datetime | None:
    """When the-loop began reading `repo`'s comments (the tracker's clock): what came before is
    history, never a prompt, whenever an item was labelled."""
    return moment(store, watch_start_key(repo))


def armed_floor(store: StateStore, item: WorkItemRef) -> datetime | None:
    """When an operator's `sessions reset` made what was said on `item` before it history (our clock)."""
    return moment(store, armed_floor_key(item))


def requests_made_key(item: WorkItemRef) -> str:
    return f"requests-made:{item}"


def requests_made(store: StateStore, item: WorkItemRef) -> int:
    """The number the last request of `item` got, kept beside its session record: a reset that
    forgets the record never lets a number be given twice on the item."""
    found = store.meta().get(requests_made_key(item), "")
    return int(found) if found.isascii() and found.isdigit() else 0


def save_requests_made(store: StateStore, item: WorkItemRef, number: int) -> None:
    if number > requests_made(store, item):
        store.save_meta(requests_made_key(item), str(number))


def vouch_key(item: WorkItemRef) -> str:
    return f"vouched-head:{item}"


def vouched_head(store: StateStore, item: WorkItemRef) -> str | None:
    """The head commit of `item` an operator vouched for (`sessions vouch`), if any."""
    return store.meta().get(vouch_key(item)) or None


def vouch(store: StateStore, item: WorkItemRef, sha: str) -> None:
    store.save_meta(vouch_key(item), sha)


def vouched_tree_key(item: WorkItemRef) -> str:
    return f"vouched-tree:{item}"


def vouched_tree(store: StateStore, item: WorkItemRef) -> str:
    """Which worktree of `item` (commit, host, folder) was made or found holding only a vouched
    head, with nothing started in it since but harnesses allowed their folder's settings at that
    head; "": none. Kept in the store, out of reach of a write in the worktree."""
    return store.meta().get(vouched_tree_key(item), "")


def save_vouched_tree(store: StateStore, item: WorkItemRef, tree: str) -> None:
    if vouched_tree(store, item) != tree:
        store.save_meta(vouched_tree_key(item), tree)
