"""Workspace values and decisions: pure, no git."""

from __future__ import annotations

from dataclasses import replace

import pytest

from domain.model import ItemKind, PullHead, SessionRecord, SessionState, SessionStatus, WorkItem
from domain.refs import Naming, RepoRef, WorkItemRef
from domain.workspace import (
    Dirt,
    Found,
    Occupants,
    Prepare,
    WorkspaceSpec,
    check_clone_url,
    clone_url,
    head_decision,
    output_tail,
    prepare_decision,
    removal_decision,
    still_closed,
)

REF = WorkItemRef.parse("github:acme/widgets#7")


def test_an_issue_is_cut_from_the_default_branch_on_branch_the_loop_slug() -> None:
    spec = WorkspaceSpec.for_item(WorkItem(REF, "t", "alice", frozenset()), "/w/x")
    assert (spec.branch, spec.pull, spec.start) == ("the-loop/github-acme-widgets-7", None, "the default branch's tip")


def test_a_pull_request_is_cut_from_its_head() -> None:
    spec = WorkspaceSpec.for_item(WorkItem(REF, "t", "alice", frozenset(), kind=ItemKind.PULL_REQUEST), "/w/x")
    assert (spec.pull, spec.start) == (7, "refs/pull/7/head")


def test_the_clone_url_template_is_filled_per_repository() -> None:
    repo = RepoRef.parse("ghe.example:8443/acme/widgets")
    assert clone_url("https://{host}/{owner}/{repo}.git", repo) == "https://ghe.example:8443/acme/widgets.git"
    assert clone_url("file:///mirrors/{repo}", repo) == "file:///mirrors/widgets"


@pytest.mark.parametrize(
    ("template", "complaint"),
    [("https://{hostname}/{owner}/{repo}", "unknown placeholder {hostname}"), ("--upload-pack=x", "not a clone URL")],
)
def test_a_bad_clone_url_template_says_what_is_wrong(template: str, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        check_clone_url(template)


def test_a_repository_name_can_never_turn_the_url_into_an_option() -> None:
    with pytest.raises(ValueError, match="not a clone URL"):
        clone_url("{owner}/{repo}", RepoRef.parse("-c/x"))


@pytest.mark.parametrize(
    ("found", "first", "choice"),
    [
        (Found.MISSING, True, Prepare.CREATE),
        (Found.MISSING, False, Prepare.CREATE),  # a respawn after the worktree was removed
        (Found.READY, True, Prepare.REUSE),
        (Found.READY, False, Prepare.REUSE),
        (Found.UNFINISHED, True, Prepare.REMAKE),
        (Found.UNFINISHED, False, Prepare.REMAKE),
        (Found.FOREIGN, True, Prepare.REFUSE),
        (Found.FOREIGN, False, Prepare.USE_AS_IS),
    ],
)
def test_what_is_done_with_the_folder_before_a_spawn(found: Found, first: bool, choice: Prepare) -> None:
    assert prepare_decision(found, first=first).choice is choice


def test_a_clean_worktree_with_no_live_session_may_go() -> None:
    assert removal_decision(frozenset(), SessionState.DEAD).choice is True
    assert removal_decision(frozenset(), SessionState.ABSENT).choice is True


@pytest.mark.parametrize("state", [SessionState.LIVE, SessionState.UNKNOWN])
def test_a_worktree_whose_session_may_be_live_is_kept(state: SessionState) -> None:
    assert removal_decision(frozenset(), state).choice is False


def test_every_reason_to_keep_a_worktree_is_said() -> None:
    decision = removal_decision(frozenset(Dirt), SessionState.ABSENT)
    assert (decision.choice, decision.reason) == (
        False,
        "uncommitted change; untracked file; commit missing from every remote branch; change git status does not "
        "show (skip-worktree or assume-unchanged); ignored file worth keeping (routing.workspace.keepIgnored)",
    )


def test_a_worktree_a_process_works_in_is_kept_naming_it() -> None:
    decision = removal_decision(frozenset(), SessionState.ABSENT, Occupants(inside=(12, 13, 14, 15)))
    assert (decision.choice, decision.reason) == (False, "process 12, 13, 14 and 1 more works inside it")


def test_a_process_that_could_not_be_looked_into_keeps_the_worktree() -> None:
    decision = removal_decision(frozenset(), SessionState.ABSENT, Occupants(unreadable=(7,)))
    assert (decision.choice, decision.reason) == (False, "process 7 could not be looked into: it may work inside it")


def test_processes_that_could_not_be_listed_keep_the_worktree() -> None:
    decision = removal_decision(frozenset(), SessionState.ABSENT, Occupants(listed=False))
    assert (decision.choice, decision.reason) == (
        False,
        "the processes could not be listed (no /proc): one may work inside it",
    )


def test_a_session_reopened_reset_or_written_since_the_first_look_keeps_the_worktree() -> None:
    first = SessionRecord(
        WorkItemRef(RepoRef.parse("acme/widgets"), 1), "claude", "sid", "/w", status=SessionStatus.CLOSED, version=3
    )

    assert still_closed(first, first).choice is True
    assert still_closed(first, None).reason == "its session is no longer closed"
    assert still_closed(first, replace(first, status=SessionStatus.ACTIVE)).reason == "its session is no longer closed"
    assert still_closed(first, replace(first, version=4)).reason == "its session changed since prune looked at it"


def test_the_setup_output_tail_is_bounded_and_made_inert() -> None:
    tail = output_tail("noise\n" * 1000 + "\x1b]0;title\x07 fatal: missing", limit=100)
    assert tail.startswith("[… ") and tail.endswith("␛]0;title␇ fatal: missing")
    assert "\x1b" not in tail and len(tail.encode()) < 200


# --- whose head may run on the host

SHA = "3f786850e387550fdab836ed7e6dc881de23001b"
FORK = PullHead("mallory/widgets", SHA, fork=True)


@pytest.mark.parametrize(
    ("head", "trust_forks", "vouched", "runs"),
    [
        (None, False, None, True),  # an issue: the default branch
        (PullHead("acme/widgets", SHA, fork=False), False, None, True),
        (FORK, False, None, False),
        (PullHead("", SHA, fork=True), False, None, False),  # a deleted fork
        (FORK, True, None, True),
        (FORK, False, SHA, True),
        (FORK, False, "0" * 40, False),  # vouched for an earlier head: a push since is not covered
    ],
    ids=["issue", "own-repo", "fork", "deleted-fork", "trust-forks", "vouched", "vouched-earlier-head"],
)
def test_only_a_head_someone_vouched_for_runs_on_the_host(
    head: PullHead | None, trust_forks: bool, vouched: str | None, runs: bool
) -> None:
    assert head_decision(REF, head, trust_forks=trust_forks, vouched=vouched).choice is runs


def test_an_unvouched_fork_head_says_whose_it_is_and_how_to_vouch() -> None:
    reason = head_decision(REF, FORK, trust_forks=False, vouched=None).reason
    assert "mallory/widgets at 3f786850e387" in reason
    assert "the-loop sessions vouch --work-item github:acme/widgets#7" in reason


def test_a_worktree_made_before_the_upgrade_keeps_its_branch_and_a_new_one_gets_the_injective_slug() -> None:
    dotted = WorkItemRef.parse("github:acme/foo.js#1")

    assert WorkspaceSpec(dotted, "/w", naming=Naming.LEGACY).branch == "the-loop/github-acme-foo.js-1"
    assert WorkspaceSpec(dotted, "/w").branch == "the-loop/" + dotted.slug != "the-loop/github-acme-foo.js-1"


@pytest.mark.parametrize(
    "secret",
    [
        "ghp_" + "A1b2" * 9,
        "gho_" + "Z9y8" * 9,
        "github_pat_11ABCDEFG0" + "x" * 60,
        "sk-ant-api03-" + "k" * 40,
        "sk-proj-" + "Q" * 40,
    ],
)
def test_state_a_token_in_the_setup_output_never_reaches_the_event_log(secret: str) -> None:
    tail = output_tail(f"cloning with {secret}\nAuthorization: Bearer abc.def-ghi\ndone\n")

    assert secret not in tail and "abc.def-ghi" not in tail
    assert "cloning with [redacted]" in tail and "Authorization: [redacted]" in tail and "done" in tail
