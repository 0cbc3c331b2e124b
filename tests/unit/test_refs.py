"""Work item refs, slugs and tmux targets."""

from __future__ import annotations

import pytest

from domain.errors import InvalidRef
from domain.refs import RepoRef, TmuxTarget, WorkItemRef


def test_a_github_ref_parses_and_formats_back() -> None:
    ref = WorkItemRef.parse("github:acme/widgets#42")
    assert (ref.repo.host, ref.repo.owner, ref.repo.name, ref.number) == ("github.com", "acme", "widgets", 42)
    assert str(ref) == "github:acme/widgets#42"


def test_a_ref_on_another_host_keeps_the_host_and_port() -> None:
    ref = WorkItemRef.parse("github:ghe.example.com:8443/acme/widgets#7")
    assert ref.repo.host == "ghe.example.com:8443"
    assert str(ref) == "github:ghe.example.com:8443/acme/widgets#7"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "acme/widgets#1",
        "github:acme#1",
        "github:acme/widgets",
        "github:acme/widgets#0",
        "github:acme/wid gets#1",
        "gitlab:acme/widgets#1",
        "github:acme/widgets#1;rm",
        "github:../widgets#1",
        "github:acme/widgets#-1",
    ],
)
def test_anything_else_is_a_clear_error(text: str) -> None:
    with pytest.raises(InvalidRef, match="expected 'github:owner/repo#N'"):
        WorkItemRef.parse(text)


def test_the_slug_turns_every_run_of_unsafe_characters_into_a_dash() -> None:
    assert WorkItemRef.parse("github:acme/widgets#42").slug == "github-acme-widgets-42"
    assert WorkItemRef.parse("github:h.io:99/a/b.c#1").slug == "github-h.io-99-a-b.c-1"


def test_the_target_is_loop_slug_with_dots_and_colons_as_underscores() -> None:
    assert WorkItemRef.parse("github:h.io/a/b.c#1").target.name == "loop-github-h_io-a-b_c-1"
    assert WorkItemRef.parse("github:acme/widgets#3").target.exact == "=loop-github-acme-widgets-3"


def test_a_target_the_loop_did_not_mint_is_refused() -> None:
    with pytest.raises(InvalidRef):
        TmuxTarget("victim")
    with pytest.raises(InvalidRef):
        TmuxTarget("loop-a;kill-server")


def test_a_repository_parses_with_an_optional_host() -> None:
    assert str(RepoRef.parse("acme/widgets")) == "acme/widgets"
    assert RepoRef.parse("localhost:8443/acme/widgets").host == "localhost:8443"
    with pytest.raises(InvalidRef, match="not a repository"):
        RepoRef.parse("widgets")
