"""GitHub's request budgets as the heartbeat carries them, and as `status` and the fleet page say them:
the token's per host (`budgets`), or in App mode each installation's (`installation_budgets`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from domain.budget import InstallationBudget, RateBudget


@dataclass(frozen=True, slots=True)
class Budgets:
    """What the last cycle's replies said: per host of its one token, and per App installation."""

    hosts: Mapping[str, RateBudget] = field(default_factory=dict)
    installations: tuple[InstallationBudget, ...] = ()

    def as_json(self) -> dict[str, Any]:
        """`budgets` by host as it always was, and `installation_budgets` (App mode) beside it."""
        return {
            "budgets": {host: _numbers(b) for host, b in self.hosts.items()},
            "installation_budgets": [
                {"host": i.host, "installation": i.installation, "owners": list(i.owners)} | _numbers(i.budget)
                for i in self.installations
            ],
        }

    @classmethod
    def parse(cls, beat: Mapping[str, Any]) -> Budgets:
        """From a heartbeat's fields; raises KeyError, TypeError or ValueError on a malformed one."""
        hosts = {str(host): _budget(b) for host, b in dict(beat.get("budgets") or {}).items()}
        installations = (_installation(i) for i in list(beat.get("installation_budgets") or []))
        return cls(hosts, sorted_installations(installations))

    def lines(self) -> list[str]:
        """One line a host's token or an installation: `4,873 of 5,000 left, resets 16:42 UTC`, an
        installation's led by `installation 7 (acme): `; a host named when there are several."""
        several = len({*self.hosts, *(i.host for i in self.installations)}) > 1
        said = [_said(b) + (f" ({host})" if several else "") for host, b in sorted(self.hosts.items())]
        for i in self.installations:
            owners = ", ".join(i.owners)
            said.append(
                f"installation {i.installation} ({owners}): {_said(i.budget)}" + (f" on {i.host}" if several else "")
            )
        return said


def sorted_installations(installations: Iterable[InstallationBudget]) -> tuple[InstallationBudget, ...]:
    return tuple(sorted(installations, key=lambda i: (i.host, i.installation)))


def _said(budget: RateBudget) -> str:
    reset = datetime.fromtimestamp(budget.reset_epoch, UTC)
    return f"{budget.remaining:,} of {budget.limit:,} left, resets {reset:%H:%M} UTC"


def _numbers(budget: RateBudget) -> dict[str, Any]:
    return {"remaining": budget.remaining, "limit": budget.limit, "reset": budget.reset_epoch}


def _installation(fields: Mapping[str, Any]) -> InstallationBudget:
    number = int(fields["installation"])
    owners = tuple(str(owner) for owner in fields["owners"])
    return InstallationBudget(str(fields["host"]), number, owners, _budget(fields, installation=number))


def _budget(fields: Mapping[str, Any], *, installation: int | None = None) -> RateBudget:
    return RateBudget(int(fields["remaining"]), int(fields["limit"]), float(fields["reset"]), installation)
