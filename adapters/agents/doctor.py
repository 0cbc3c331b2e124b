"""What `doctor` says, one check a line, and what a harness package's own checks are handed
(`adapters.harnesses.<name>.doctor.DOCTOR`), with the checks several agents share."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from domain.errors import LoopError
from domain.model import HarnessSpec


class Mark(enum.Enum):
    OK = "✓"
    FAILED = "✗"
    WARNING = "!"  # works, but not as tested: said with its fix, not a failure
    SKIPPED = "–"  # not needed by this configuration


class Repair(Protocol):
    """What `doctor --fix` may write for a failed check, with the operator's consent: an agent's
    first run recorded in its configuration at `path` (and an API key ending in `approve` approved)."""

    @property
    def path(self) -> Path: ...

    @property
    def approve(self) -> str: ...

    def says(self) -> str:
        """What would be written, as the operator is asked; never a secret."""


@dataclass(frozen=True, slots=True)
class Check:
    mark: Mark
    subject: str
    detail: str
    fix: str = ""
    repair: Repair | None = None  # what `doctor --fix` may write, with the operator's consent

    def line(self) -> str:
        fix = f" — fix: {self.fix}" if self.fix and self.mark in {Mark.FAILED, Mark.WARNING} else ""
        return f"{self.mark.value} {self.subject}: {self.detail}{fix}"


def check(subject: str, ask: Callable[[], str], fix: str) -> Check:
    """✓ with what `ask` answers, or ✗ with its `LoopError` and the fix."""
    try:
        return Check(Mark.OK, subject, ask())
    except LoopError as error:
        return Check(Mark.FAILED, subject, str(error), fix)


class HarnessProbe(Protocol):
    """What a harness's own checks read off the machine; nothing changes anything.

    Failure modes: every method raises `LoopError` whose message is the cause (unreadable, not
    JSON or TOML, not writable); none raises anything else.
    """

    def json_file(self, path: Path) -> Mapping[str, Any] | None:
        """The JSON object in `path`; None when there is no such file."""

    def toml_file(self, path: Path) -> Mapping[str, Any] | None:
        """The TOML table in `path`; None when there is no such file."""

    def file_writable(self, path: Path) -> str:
        """Whether the file `path` can be replaced (written beside and renamed), or created."""


@dataclass(frozen=True, slots=True)
class Found:
    """A harness whose binary `doctor` found as its panes start it: what its package's checks get."""

    spec: HarnessSpec
    version: str  # the first line `binary --version` printed, and where the binary was found
    pane: Mapping[str, str]  # the panes' environment: the tmux server's (else the daemon's), the spawn's over it
    given: Mapping[str, str]  # what every spawn is given (its `env` and `passEnv`)
    daemon: Mapping[str, str]  # the daemon's own: where the-loop writes (trusted folders)
    server: Mapping[str, str] | None  # the running tmux server's; None: none runs
    probe: HarnessProbe

    @property
    def subject(self) -> str:
        return f"harness {self.spec.name}"

    @property
    def key(self) -> str:
        return f"routing.harnesses.{self.spec.name}"


@dataclass(frozen=True, slots=True)
class HarnessDoctor:
    """A harness package's own checks, run once `doctor` found its binary; `install_docs`: where
    installing it for a daemon is written up, named in the fix when the binary is not found;
    `credentials`: how its credentials are renewed, said when the API refused them and an item waits."""

    checks: Callable[[Found], Iterator[Check]]
    install_docs: str = ""
    credentials: str = ""


def pinned_version(found: Found, version: str, pin: str, fix: str) -> Iterator[Check]:
    """A warning when `version` (read from what `--version` printed; empty: not read) is not the
    pinned one."""
    if version != pin:
        yield Check(
            Mark.WARNING,
            f"{found.subject} version",
            f"{version or found.version}, not {pin}, the version whose behaviour the tests pin",
            fix,
        )


def trust_writable(found: Found, *, writer: Path, reader: Path, agent: str, variable: str) -> Check:
    """The trusted-folders writer writes where the panes' agent reads (`writer`: found from the
    daemon's environment; `reader`: from the panes'; `variable` moves the file), and may write there."""
    subject = f"{found.subject} trust"
    if writer != reader:
        return Check(
            Mark.FAILED,
            subject,
            f"the-loop records trusted folders in {writer} but the panes' {agent} reads {reader}",
            f"give the daemon and the panes the same HOME and {variable}",
        )
    fix = f"let the daemon's user write {reader} and its folder, or set {found.spec.name}'s trustWorkdir: false"
    return check(subject, partial(found.probe.file_writable, reader), fix)
