"""The harness packages: each agent CLI is one package, `adapters.harnesses.<name>`, and registers
what it brings; nothing outside its package names it. A package may hold:

- `profile.py`: `PROFILE`, its built-in `routing.harnesses.<name>` entry (the YAML's keys; its
  `receipts` names the package whose hooks a spawn gets), and `SESSION_RULES` (its permission hook
  takes a rule for the session: `the-loop allow always`), `PERMISSION_MODE` (it takes
  `permissionMode`) and `PASTE_WHILE_BUSY` (False: a prompt typed during a turn may join that turn
  with no receipt of its own, so the-loop pastes only once the turn has ended). Data only: the
  configuration reads it (`profiles`).
- `events.py`: `KINDS`, its hooks' own event names read as receipt kinds, and `BLOCKING`, the
  notification types that mean a dialog waits, beside the hook vocabulary every hooks harness
  shares (`adapters.receipts.hook_json`). Light: the lean `sessions list` reads receipts with it.
- `harness.py`: `HARNESS`, a `Registration` (`adapters.agents.registration`): its receipt channel
  (what a spawn is handed so its receipts reach their folder) and its trusted-folder writer. The
  container reads these (`registered`).
- `doctor.py`: `DOCTOR`, a `HarnessDoctor` (`adapters.agents.doctor`): its own checks in `doctor`
  (its pinned version, its sign-in, its trust writer), run once its binary is found, for a harness
  whose hooks are the package's or whose binary bears its name (`doctors`).
- `usage.py`: `USAGE`, what one turn cost from the agent's own transcript, given the receipt of the
  turn's end (`adapters.agents.usage`), for a harness whose hooks are the package's (`usage_readers`).

A package is found by being here: adding one touches no other file.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from domain.receipts import ReceiptKind

if TYPE_CHECKING:
    from adapters.agents.doctor import HarnessDoctor
    from adapters.agents.registration import Registration
    from adapters.agents.usage import Reader


@dataclass(frozen=True, slots=True)
class Profile:
    """A package's built-in harness entry and what its hooks can do."""

    entry: Mapping[str, Any]
    session_rules: bool = False
    permission_mode: bool = False
    paste_while_busy: bool = True


def names() -> tuple[str, ...]:
    """Every harness package, by name, in order."""
    return tuple(sorted(found.name for found in pkgutil.iter_modules(__path__) if found.ispkg))


def hook_packages() -> tuple[str, ...]:
    """The packages whose hooks a spawn can be handed: those that register a `harness.py`."""
    return tuple(name for name in names() if importlib.util.find_spec(f"{__name__}.{name}.harness") is not None)


def profiles() -> dict[str, Profile]:
    """Each package's built-in profile, by the package's name."""
    found = {}
    for name in names():
        module = _part(name, "profile")
        if module is not None:
            found[name] = Profile(
                module.PROFILE,
                session_rules=getattr(module, "SESSION_RULES", False),
                permission_mode=getattr(module, "PERMISSION_MODE", False),
                paste_while_busy=getattr(module, "PASTE_WHILE_BUSY", True),
            )
    return found


def hook_events() -> tuple[dict[str, ReceiptKind], frozenset[str]]:
    """Every package's own hook event names (as receipt kinds) and blocking notification types."""
    kinds: dict[str, ReceiptKind] = {}
    blocking: set[str] = set()
    for name in names():
        module = _part(name, "events")
        if module is not None:
            kinds.update(module.KINDS)
            blocking |= set(getattr(module, "BLOCKING", ()))
    return kinds, frozenset(blocking)


def registered() -> dict[str, Registration]:
    """Each hooks package's registration (its receipt channel, its trust writer), by name."""
    return _each("harness", "HARNESS")


def doctors() -> dict[str, HarnessDoctor]:
    """Each package's own doctor checks, by the package's name."""
    return _each("doctor", "DOCTOR")


def usage_readers() -> dict[str, Reader]:
    """Each package's reader of what a turn cost, by the package's name."""
    return _each("usage", "USAGE")


def _each(part: str, attribute: str) -> dict[str, Any]:
    """What each package that has the module `part` exposes as `attribute`, by the package's name."""
    return {name: getattr(module, attribute) for name in names() if (module := _part(name, part)) is not None}


def _part(name: str, part: str) -> ModuleType | None:
    qualified = f"{__name__}.{name}.{part}"
    if importlib.util.find_spec(qualified) is None:
        return None
    return importlib.import_module(qualified)
