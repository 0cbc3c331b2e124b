"""Work item refs, slugs and tmux targets."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.errors import AmbiguousRef, InvalidRef
from domain.refs import ItemSpec, Naming, RepoRef, TmuxTarget, WorkItemRef


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
    assert WorkItemRef.parse("github:acme/the-loop#42").slug == "github-acme-the-loop-42"
    assert WorkItemRef.parse("github:h.io:99/a/b.c#1").slug_by(Naming.LEGACY) == "github-h.io-99-a-b.c-1"


def test_the_target_is_loop_slug_with_dots_and_colons_as_underscores() -> None:
    assert WorkItemRef.parse("github:h.io/a/b.c#1").target.name.startswith("loop-github-h_io-a-b_c-1-x")
    assert WorkItemRef.parse("github:acme/widgets#3").target.exact == "=loop-github-acme-widgets-3"


def test_a_dotted_and_an_underscored_repository_get_two_tmux_sessions() -> None:
    dotted, underscored = WorkItemRef.parse("github:acme/foo.js#1"), WorkItemRef.parse("github:acme/foo_js#1")

    assert dotted.target != underscored.target
    assert underscored.target.name == "loop-github-acme-foo_js-1"  # faithful already: as before
    assert dotted.target.name.startswith("loop-github-acme-foo_js-1-x")  # readable, and told apart


def test_a_dash_moved_between_owner_and_repository_gives_another_slug() -> None:
    first, second = WorkItemRef.parse("github:a/b-c#1"), WorkItemRef.parse("github:a-b/c#1")

    assert first.slug != second.slug
    assert first.target != second.target


def test_the_old_names_are_still_minted_for_records_written_before() -> None:
    dotted = WorkItemRef.parse("github:acme/foo.js#1")

    assert dotted.slug_by(Naming.LEGACY) == "github-acme-foo.js-1"
    assert TmuxTarget.for_slug(dotted.slug_by(Naming.LEGACY)).name == "loop-github-acme-foo_js-1"
    assert dotted.slug_by(Naming.INJECTIVE) == dotted.slug


# a small alphabet, so that pairs whose old names coincide are common
_NAME = st.text(alphabet="a-_.", min_size=1, max_size=4).filter(lambda name: name not in {".", ".."})
_REFS = st.builds(
    WorkItemRef,
    st.builds(RepoRef, st.sampled_from(["github.com", "h.io", "h-io", "h_io", "h.io:1", "h.io-1"]), _NAME, _NAME),
    st.integers(min_value=1, max_value=3),
)


@given(_REFS, _REFS)
@settings(max_examples=3000)
def test_two_refs_never_share_a_slug_or_a_tmux_session(first: WorkItemRef, second: WorkItemRef) -> None:
    if first != second:
        assert first.slug != second.slug
        assert first.target != second.target


@given(_REFS)
def test_a_slug_without_the_hash_is_the_old_one_and_decodes_back_to_its_ref(ref: WorkItemRef) -> None:
    """Why the injectivity holds for more than the hash: a readable form kept as it is decodes back
    to exactly one ref, and ends with the item's number; a hashed one ends with `-x` and hex."""
    if re.search(r"-x[0-9a-f]{12}$", ref.slug):
        return
    assert ref.slug == ref.slug_by(Naming.LEGACY)  # existing records of such refs keep their names
    match = re.fullmatch(r"github-(?P<owner>[A-Za-z0-9_]+)-(?P<repo>[A-Za-z0-9_-]+)-(?P<number>[0-9]+)", ref.slug)
    assert match is not None
    assert WorkItemRef.parse(f"github:{match['owner']}/{match['repo']}#{match['number']}") == ref
    assert ref.target.name == "loop-" + ref.slug


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


@given(_REFS, _REFS)
@settings(max_examples=3000)
def test_an_old_slug_an_item_owns_is_no_other_items_slug(first: WorkItemRef, second: WorkItemRef) -> None:
    if first != second and first.owns_legacy_slug:
        assert first.slug_by(Naming.LEGACY) != second.slug


# -- short work-item references, resolved against the watched repositories -------------------------

WIDGETS = RepoRef(host="ghe.example.com", owner="acme", name="widgets")
GADGETS = RepoRef(host="ghe.example.com", owner="acme", name="gadgets")


def resolved(text: str, *watched: RepoRef) -> str:
    return str(ItemSpec.parse(text).resolve(watched, host="ghe.example.com"))


def test_the_full_form_still_names_exactly_what_it_says() -> None:
    assert resolved("github:acme/widgets#1", WIDGETS) == "github:acme/widgets#1"
    assert resolved("github:ghe.example.com/acme/widgets#1") == "github:ghe.example.com/acme/widgets#1"


def test_owner_repo_number_is_the_watched_repository_of_that_name() -> None:
    assert resolved("acme/widgets#1", WIDGETS, GADGETS) == "github:ghe.example.com/acme/widgets#1"


def test_owner_repo_number_of_an_unwatched_repository_is_on_the_configured_host() -> None:
    assert resolved("acme/other#4", WIDGETS) == "github:ghe.example.com/acme/other#4"


def test_a_bare_number_is_the_one_watched_repository() -> None:
    assert resolved("#12", WIDGETS) == "github:ghe.example.com/acme/widgets#12"


def test_a_bare_number_with_two_watched_repositories_is_ambiguous_listing_both() -> None:
    with pytest.raises(AmbiguousRef) as refused:
        resolved("#1", WIDGETS, GADGETS)
    assert "github:ghe.example.com/acme/widgets#1" in str(refused.value)
    assert "github:ghe.example.com/acme/gadgets#1" in str(refused.value)


def test_a_bare_number_with_no_watched_repository_says_what_to_give() -> None:
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
def test_an_items_url_names_its_host_repository_and_number(url: str, expected: str) -> None:
    assert resolved(url, WIDGETS) == expected


@pytest.mark.parametrize(
    "text",
    ["", "#0", "#x", "1", "acme#1", "acme/widgets", "https://h/acme/widgets/tree/1", "ftp://h/a/b/issues/1", "#1;rm"],
)
def test_anything_else_is_a_clear_error_naming_the_forms(text: str) -> None:
    with pytest.raises(InvalidRef, match="#N"):
        ItemSpec.parse(text)
