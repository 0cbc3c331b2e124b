"""GhAppProbe with the real gh against the stand-in in App mode: what `doctor` reads of the App."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from adapters.clock import SystemClock
from adapters.github.app_probe import GhAppProbe
from domain.errors import LoopError
from domain.github_app import EVENTS, InstallationGrant
from domain.refs import RepoRef
from tests.github_standin import StandIn
from tests.github_standin.app_rig import APP_ID, AppKeyFile, app_key, app_mode, make_key
from tests.github_standin.rigs import standin

__all__ = ["app_key", "standin"]  # fixtures, imported to be used here

pytestmark = pytest.mark.gh


def probe(standin: StandIn, key_file: Path, installations: dict[str, int] | None = None) -> GhAppProbe:
    world = standin.world

    def github_now() -> float:
        return world.now.timestamp()

    return GhAppProbe(
        app_id=APP_ID,
        key_file=key_file,
        installations=installations or {},
        clock=github_now,
        monotonic=SystemClock().monotonic,
        host=standin.host,
        env=standin.gh_env(),
        timeout=20,
    )


def test_a_ready_app_is_said_key_jwt_and_installation(standin: StandIn, app_key: AppKeyFile) -> None:
    app = app_mode(standin, app_key)
    app.install(7, "acme")
    standin.world.add_repo("acme/widgets")
    asked = probe(standin, app_key.path)

    said = [asked.key(), asked.app(), asked.installation(RepoRef.parse("acme/widgets", host=standin.host))]

    assert said == [
        f"{app_key.path}: an RSA key of 2048 bits, its owner's alone",
        f"GitHub takes its JWT: the-loop-bot (app {APP_ID}), writing as the-loop-bot[bot]",
        "installation 7: its token reads acme/widgets",
    ]
    assert [path for _, path, _ in standin.world.log].count("/app") == 1  # the name and the bot's login: one read


def test_a_key_others_may_read_is_a_failure_naming_the_file(
    standin: StandIn, app_key: AppKeyFile, tmp_path: Path
) -> None:
    open_key = tmp_path / "open.pem"
    open_key.write_bytes(app_key.path.read_bytes())
    os.chmod(open_key, 0o644)
    with pytest.raises(LoopError, match=rf"^{open_key}: .* mode is 0644 \(chmod 600 {open_key}\)$"):
        probe(standin, open_key).key()


def test_a_key_github_does_not_know_is_refused_at_get_app(
    standin: StandIn, app_key: AppKeyFile, tmp_path: Path
) -> None:
    app_mode(standin, app_key)
    asked = probe(standin, make_key(tmp_path / "other.pem").path)
    asked.key()
    with pytest.raises(LoopError, match=r"GitHub refused the GitHub App .*'s JWT \(HTTP 401"):
        asked.app()


def test_a_repository_without_an_installation_is_named(standin: StandIn, app_key: AppKeyFile) -> None:
    app = app_mode(standin, app_key)
    app.install(7, "umbrella")
    standin.world.add_repo("acme/widgets")
    asked = probe(standin, app_key.path)
    asked.key()
    with pytest.raises(LoopError, match=r"is not installed on acme/widgets"):
        asked.installation(RepoRef.parse("acme/widgets", host=standin.host))


def test_a_named_installation_that_cannot_read_the_repository_is_a_failure(
    standin: StandIn, app_key: AppKeyFile
) -> None:
    app = app_mode(standin, app_key)
    app.install(7, "acme", {"acme/other"})
    standin.world.add_repo("acme/widgets")
    asked = probe(standin, app_key.path, {"acme": 7})
    asked.key()
    with pytest.raises(LoopError, match=r"acme/widgets: not found or not visible \(HTTP 404"):
        asked.installation(RepoRef.parse("acme/widgets", host=standin.host))


def test_an_installations_grant_is_what_github_says_it_holds(standin: StandIn, app_key: AppKeyFile) -> None:
    app = app_mode(standin, app_key)
    app.install(7, "acme").permissions = {"issues": "read", "pull_requests": "write", "metadata": "read"}
    standin.world.add_repo("acme/widgets")
    asked = probe(standin, app_key.path)
    asked.key()

    grant = asked.grant(RepoRef.parse("acme/widgets", host=standin.host))

    assert grant == InstallationGrant(
        7,
        "acme",
        organization=True,
        permissions={"issues": "read", "pull_requests": "write", "metadata": "read"},
        events=EVENTS,
    )


def test_a_grant_asked_with_a_key_github_does_not_know_is_refused(
    standin: StandIn, app_key: AppKeyFile, tmp_path: Path
) -> None:
    app_mode(standin, app_key).install(7, "acme")
    standin.world.add_repo("acme/widgets")
    asked = probe(standin, make_key(tmp_path / "other.pem").path, {"acme": 7})
    asked.key()
    with pytest.raises(LoopError, match=r"GitHub refused the GitHub App .*'s JWT \(HTTP 401"):
        asked.grant(RepoRef.parse("acme/widgets", host=standin.host))
