"""What a vouch covers in a fork's existing worktree: only the vouched commit, and nothing else."""

from __future__ import annotations

from domain.policy import Decision
from domain.vouching import Checkout, VouchedTree, vouched_tree_decision

A, B = "a" * 40, "b" * 40
NOTHING_LOST = Decision(True, "clean")
WORK_LOST = Decision(False, "untracked file")


def test_a_worktree_marked_as_made_at_the_vouched_commit_is_covered_whatever_its_agent_wrote() -> None:
    decision = vouched_tree_decision(B, marked=True, checkout=Checkout(B, only_head=False), discard=WORK_LOST)

    assert decision.choice is VouchedTree.PLAIN


def test_a_worktree_holding_only_the_vouched_commit_is_covered() -> None:
    decision = vouched_tree_decision(B, marked=False, checkout=Checkout(B, only_head=True), discard=WORK_LOST)

    assert decision.choice is VouchedTree.PLAIN


def test_a_worktree_at_an_earlier_head_is_made_again_when_nothing_would_be_lost() -> None:
    decision = vouched_tree_decision(B, marked=False, checkout=Checkout(A, only_head=True), discard=NOTHING_LOST)

    assert decision.choice is VouchedTree.REMAKE and f"at {A[:12]}, not the vouched {B[:12]}" in decision.reason


def test_a_worktree_holding_more_than_the_vouched_commit_with_work_in_it_starts_unvouched() -> None:
    decision = vouched_tree_decision(B, marked=False, checkout=Checkout(B, only_head=False), discard=WORK_LOST)

    assert decision.choice is VouchedTree.UNVOUCHED
    assert "files besides the vouched" in decision.reason and "untracked file" in decision.reason


def test_a_folder_git_cannot_tell_about_starts_unvouched() -> None:
    decision = vouched_tree_decision(B, marked=False, checkout=Checkout("", only_head=False), discard=WORK_LOST)

    assert decision.choice is VouchedTree.UNVOUCHED and "cannot be told" in decision.reason


def test_a_marked_worktree_its_agent_moved_to_another_head_is_made_again_when_nothing_would_be_lost() -> None:
    decision = vouched_tree_decision(B, marked=True, checkout=Checkout(A, only_head=True), discard=NOTHING_LOST)

    assert decision.choice is VouchedTree.REMAKE and f"at {A[:12]}, not the vouched {B[:12]}" in decision.reason


def test_a_marked_worktree_its_agent_moved_to_another_head_with_work_in_it_starts_unvouched() -> None:
    decision = vouched_tree_decision(B, marked=True, checkout=Checkout(A, only_head=True), discard=WORK_LOST)

    assert decision.choice is VouchedTree.UNVOUCHED


def test_a_marked_worktree_whose_head_git_cannot_tell_is_not_covered() -> None:
    decision = vouched_tree_decision(B, marked=True, checkout=Checkout("", only_head=False), discard=WORK_LOST)

    assert decision.choice is VouchedTree.UNVOUCHED and "cannot be told" in decision.reason
