"""Which agent an item gets: the first routing rule that matches it, else the default harness.

A rule names repositories (globs over `owner/repo`, or `host/owner/repo`) and labels (any of them);
a rule that names neither matches every item. An item's harness and workspace are chosen once, at
its first spawn, and recorded: a rule changed later never moves a live conversation to another
agent, nor its folder elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from domain.model import WorkItem
from domain.refs import RepoRef

# a glob segment: a name's characters and the glob's own (`*`, `?`, `[...]`, `[!...]`)
_SEGMENT = re.compile(r"^(?:[A-Za-z0-9_.*?-]|\[!?[A-Za-z0-9_.-]+\])+$")
_HOST_SEGMENT = re.compile(r"^(?:[A-Za-z0-9.:*?-]|\[!?[A-Za-z0-9.-]+\])+$")


class BadPattern(ValueError):
    """A repository pattern that is not `owner/repo` or `host/owner/repo` written with globs."""


@dataclass(frozen=True, slots=True)
class RepoPattern:
    """`owner/repo` (on the default host) or `host/owner/repo`; each part a glob (any case)."""

    host: str
    owner: str
    name: str

    @classmethod
    def parse(cls, text: str, *, host: str) -> RepoPattern:
        parts = text.strip().split("/")
        if len(parts) == 2:
            parts = [host, *parts]
        if len(parts) != 3:
            raise BadPattern(f"{text!r}: expected 'owner/repo' or 'host/owner/repo' (globs allowed)")
        where, owner, name = parts
        for part, shape in ((where, _HOST_SEGMENT), (owner, _SEGMENT), (name, _SEGMENT)):
            if not shape.match(part):
                raise BadPattern(
                    f"{text!r}: {part!r} is not a name or a glob (letters, digits, '_', '.', '-', '*', '?', "
                    "'[...]' closed)"
                )
        return cls(host=where.casefold(), owner=owner.casefold(), name=name.casefold())

    def matches(self, repo: RepoRef) -> bool:
        return (
            fnmatchcase(repo.host.casefold(), self.host)
            and fnmatchcase(repo.owner.casefold(), self.owner)
            and fnmatchcase(repo.name.casefold(), self.name)
        )


@dataclass(frozen=True, slots=True)
class Rule:
    """Items of these repositories (any, when none is named) carrying one of these labels (any,
    when none is named) get this harness, with these overrides."""

    harness: str
    repos: tuple[RepoPattern, ...] = ()
    labels: frozenset[str] = frozenset()  # casefolded
    permission_mode: str = ""  # "": the harness's own
    workspace: str = ""  # a `routing.workspaces` entry its items' folders are made by ("": `routing.workspace`)

    def matches(self, item: WorkItem) -> bool:
        if self.repos and not any(pattern.matches(item.ref.repo) for pattern in self.repos):
            return False
        return not self.labels or any(label.casefold() in self.labels for label in item.labels)


@dataclass(frozen=True, slots=True)
class Route:
    """The harness an item gets, the workspace its folder is made by, and what chose them: a rule
    (its index), the default harness (None, in the default workspace), or a start naming the harness."""

    harness: str
    permission_mode: str = ""
    rule: int | None = None
    workspace: str = ""  # "": `routing.workspace`
    named: bool = False  # a start named the harness (`the-loop start codex`): over the rules

    @property
    def chosen_by(self) -> str:
        """What chose the harness, as the event log says it."""
        if self.named:
            return "a start naming it"
        return "routing.defaultHarness" if self.rule is None else f"routing.rules[{self.rule}]"


def route_of(rules: Iterable[Rule], default: str, item: WorkItem) -> Route | None:
    """The first rule matching `item`, else the default harness; None when neither covers it."""
    for index, rule in enumerate(rules):
        if rule.matches(item):
            return Route(rule.harness, rule.permission_mode, index, rule.workspace)
    return Route(default) if default else None


@dataclass(frozen=True, slots=True)
class Routing:
    """What the configuration says of an item's agent: the rules in order, the default harness ("":
    none), and the harnesses it defines (a recorded harness outside them is configured no more)."""

    rules: tuple[Rule, ...] = ()
    default: str = ""
    harnesses: frozenset[str] = frozenset()

    def route(self, item: WorkItem) -> Route | None:
        return route_of(self.rules, self.default, item)

    def mode_for(self, item: WorkItem, harness: str) -> str:
        return mode_for(self.rules, item, harness)

    def configured(self, harness: str) -> bool:
        return harness in self.harnesses


def mode_for(rules: Iterable[Rule], item: WorkItem, harness: str) -> str:
    """The permission mode `harness` gets for `item` when a start names it: the first rule that
    matches the item and names that harness says it ("": none does, the harness's own)."""
    return next((rule.permission_mode for rule in rules if rule.harness == harness and rule.matches(item)), "")
