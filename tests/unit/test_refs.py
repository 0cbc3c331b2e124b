"""Work item refs, slugs and tmux targets."""

from __future__ import annotations

import pytest

from domain.errors import AmbiguousRef, InvalidRef
from domain.refs import ItemSpec, RepoRef, TmuxTarget, WorkItemRef


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


# -- issue 19 item 5: short work-item references, resolved against the watched repositories --------

WIDGETS = RepoRef(host="ghe.example.com", owner="acme", name="widgets")
GADGETS = RepoRef(host="ghe.example.com", owner="acme", name="gadgets")


def resolved(text: str, *watched: RepoRef) -> str:
    return str(ItemSpec.parse(text).resolve(watched, host="ghe.example.com"))


def test_issue19_item5_the_full_form_still_names_exactly_what_it_says() -> None:
    assert resolved("github:acme/widgets#1", WIDGETS) == "github:acme/widgets#1"
    assert resolved("github:ghe.example.com/acme/widgets#1") == "github:ghe.example.com/acme/widgets#1"


def test_issue19_item5_owner_repo_number_is_the_watched_repository_of_that_name() -> None:
    assert resolved("acme/widgets#1", WIDGETS, GADGETS) == "github:ghe.example.com/acme/widgets#1"


def test_issue19_item5_owner_repo_number_of_an_unwatched_repository_is_on_the_configured_host() -> None:
    assert resolved("acme/other#4", WIDGETS) == "github:ghe.example.com/acme/other#4"


def test_issue19_item5_a_bare_number_is_the_one_watched_repository() -> None:
    assert resolved("#12", WIDGETS) == "github:ghe.example.com/acme/widgets#12"


def test_issue19_item5_a_bare_number_with_two_watched_repositories_is_ambiguous_listing_both() -> None:
    with pytest.raises(AmbiguousRef) as refused:
        resolved("#1", WIDGETS, GADGETS)
    assert "github:ghe.example.com/acme/widgets#1" in str(refused.value)
    assert "github:ghe.example.com/acme/gadgets#1" in str(refused.value)


def test_issue19_item5_a_bare_number_with_no_watched_repository_says_what_to_give() -> None:
    with pytest.raises(InvalidRef, match="owner/repo#N"):
        resolved("#1")


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://ghe.example.com/acme/widgets/issues/7", "github:ghe.example.com/acme/widgets#7"),
        ("https://ghe.example.com/acme/widgets/pull/8", "github:ghe.example.com/acme/widgets#8"),
        ("https://ghe.example.com/acme/widgets/pull/8/files", "github:ghe.example.com/acme/widgets#8"),
        ("https://github.com/acme/widgets/issues/9#issuecomment-5", "github:acme/widgets#9"),
        ("https://localhost:40695/acme/widgets/issues/3", "github:localhost:40695/acme/widgets#3"),
    ],
)
def test_issue19_item5_an_items_url_names_its_host_repository_and_number(url: str, expected: str) -> None:
    assert resolved(url, WIDGETS) == expected


@pytest.mark.parametrize(
    "text",
    ["", "#0", "#x", "1", "acme#1", "acme/widgets", "https://h/acme/widgets/tree/1", "ftp://h/a/b/issues/1", "#1;rm"],
)
def test_issue19_item5_anything_else_is_a_clear_error_naming_the_forms(text: str) -> None:
    with pytest.raises(InvalidRef, match="#N"):
        ItemSpec.parse(text)
