"""What `demo` takes from the configuration, and the configurations it refuses before touching anything."""

from __future__ import annotations

from typing import Any

import pytest

from app.config.settings import EMBEDDED_DEFAULTS, Settings
from app.demo.run import READY_TEXT, DemoFailed, plan_for
from domain.refs import RepoRef

SANDBOX = {"sources": [{"provider": "sandbox", "repos": ["sandbox/demo"], "label": "loop"}]}


def _routing(**keys: Any) -> dict[str, Any]:
    return {"authorizedUsers": ["demo"], "tmux": {"socketName": "private"}, **keys}


def test_on_the_embedded_default_the_demo_arms_a_sandbox_item_by_an_authorized_user() -> None:
    plan = plan_for(Settings(**EMBEDDED_DEFAULTS))
    assert (plan.source.repo, plan.source.label) == (RepoRef.parse("sandbox/demo"), "loop")
    assert plan.author == "demo"
    assert plan.ready_text == READY_TEXT


def test_the_demo_never_runs_on_the_operators_default_tmux_server() -> None:
    settings = Settings(polling=SANDBOX, routing=_routing(tmux={"socketName": ""}))
    with pytest.raises(DemoFailed, match=r"routing\.tmux\.socketName is empty"):
        plan_for(settings)


def test_the_demo_needs_a_sandbox_source() -> None:
    github = {"sources": [{"provider": "github", "repos": ["octo/api"], "label": "loop"}]}
    with pytest.raises(DemoFailed, match="no sandbox source"):
        plan_for(Settings(polling=github, routing=_routing()))


def test_the_demo_needs_someone_authorized_to_comment() -> None:
    with pytest.raises(DemoFailed, match=r"authorizedUsers is empty"):
        plan_for(Settings(polling=SANDBOX, routing=_routing(authorizedUsers=[])))


def test_a_harness_the_demo_does_not_know_is_given_time_to_settle_instead_of_a_ready_text() -> None:
    harnesses = {"mine": {"binary": "my-agent"}}
    plan = plan_for(Settings(polling=SANDBOX, routing=_routing(defaultHarness="mine", harnesses=harnesses)))
    assert plan.ready_text is None
