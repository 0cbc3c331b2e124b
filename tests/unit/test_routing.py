"""Which agent an item gets: routing rules in order, repository globs, labels any-of, the default."""

from __future__ import annotations

import pytest

from domain.model import WorkItem
from domain.refs import RepoRef, WorkItemRef
from domain.routing import BadPattern, RepoPattern, Route, Rule, route_of

GITHUB = "github.com"


def _item(repo: str = "acme/api", *labels: str, host: str = GITHUB) -> WorkItem:
    return WorkItem(WorkItemRef(RepoRef.parse(repo, host=host), 7), "title", "alice", frozenset(labels))


def _rule(harness: str, *, repos: tuple[str, ...] = (), labels: tuple[str, ...] = (), mode: str = "") -> Rule:
    patterns = tuple(RepoPattern.parse(text, host=GITHUB) for text in repos)
    return Rule(harness, patterns, frozenset(label.casefold() for label in labels), mode)


RULES = (
    _rule("claude", repos=("acme/api",), mode="plan"),
    _rule("codex", labels=("codex", "second-opinion")),
    _rule("gemini", repos=("acme/web-*", "ghe.example.com/*/*")),
)


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (_item("acme/api"), Route("claude", "plan", 0)),
        (_item("ACME/Api"), Route("claude", "plan", 0)),  # GitHub's names are any case
        (_item("acme/api", "codex"), Route("claude", "plan", 0)),  # the first rule that matches wins
        (_item("acme/other", "Second-Opinion"), Route("codex", "", 1)),  # labels any-of, any case
        (_item("acme/web-shop"), Route("gemini", "", 2)),
        (_item("corp/tools", host="ghe.example.com"), Route("gemini", "", 2)),
        (_item("acme/other"), Route("demo")),  # none matches: the default harness
    ],
)
def test_the_first_rule_that_matches_an_item_picks_its_harness_else_the_default(
    item: WorkItem, expected: Route
) -> None:
    assert route_of(RULES, "demo", item) == expected


def test_an_item_no_rule_covers_has_no_route_without_a_default_harness() -> None:
    assert route_of(RULES, "", _item("acme/other")) is None
    assert route_of(RULES, "", _item("acme/api")) == Route("claude", "plan", 0)


def test_a_rule_needs_both_its_repositories_and_its_labels_when_it_names_both() -> None:
    both = (_rule("codex", repos=("acme/*",), labels=("codex",)),)

    assert route_of(both, "", _item("acme/api", "codex")) == Route("codex", "", 0)
    assert route_of(both, "", _item("acme/api")) is None
    assert route_of(both, "", _item("other/api", "codex")) is None


def test_a_glob_stays_within_its_part_of_the_name() -> None:
    owners = (_rule("codex", repos=("acme*/api",)),)

    assert route_of(owners, "", _item("acme-labs/api")) == Route("codex", "", 0)
    assert route_of(owners, "", _item("acme/api-v2")) is None  # `*` in the owner never reaches the name
    assert route_of(owners, "", _item("acme/api", host="ghe.example.com")) is None  # another host


@pytest.mark.parametrize("text", ["acme", "a/b/c/d", "acme/[api", "acme/api]x", "acme/a pi", "acme/", "/api", "x/y;z"])
def test_a_repository_pattern_that_is_not_one_is_refused_naming_it(text: str) -> None:
    with pytest.raises(BadPattern) as refused:
        RepoPattern.parse(text, host=GITHUB)

    said = str(refused.value)
    assert said.startswith(repr(text.strip())) and ("expected" in said or "is not a name or a glob" in said)


def test_the_route_says_which_rule_chose_it() -> None:
    assert Route("codex", rule=1).chosen_by == "routing.rules[1]"
    assert Route("demo").chosen_by == "routing.defaultHarness"
    assert Route("codex", named=True).chosen_by == "a start naming it"


def test_a_rule_naming_a_workspace_gives_its_items_that_workspace_and_the_default_gives_none() -> None:
    rules = (Rule("claude", (RepoPattern.parse("acme/api", host=GITHUB),), workspace="api"), _rule("codex"))

    assert route_of(rules, "", _item("acme/api")) == Route("claude", "", 0, workspace="api")
    assert route_of(rules, "", _item("acme/web")) == Route("codex", "", 1)  # its rule names none: the default
    assert route_of((), "demo", _item("acme/api")).workspace == ""  # type: ignore[union-attr]
