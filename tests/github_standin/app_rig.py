"""A GitHub App for tests: its key pair, the stand-in in App mode, and `GhTracker` acting as the App."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from adapters.clock import SystemClock
from adapters.github import GhTracker
from adapters.github.app_auth import GitHubApp
from adapters.github.app_key import AppKey
from tests.github_standin import StandIn
from tests.github_standin.app import AppSide

APP_ID = 424242


@dataclass(frozen=True)
class AppKeyFile:
    private: rsa.RSAPrivateKey
    path: Path  # the PEM, mode 0600


@pytest.fixture(scope="module")
def app_key(tmp_path_factory: pytest.TempPathFactory) -> AppKeyFile:
    return make_key(tmp_path_factory.mktemp("app-key") / "app.pem")


def make_key(path: Path) -> AppKeyFile:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    )
    path.write_bytes(pem)
    os.chmod(path, 0o600)
    return AppKeyFile(private, path)


def app_mode(standin: StandIn, key: AppKeyFile, *, token_seconds: int = 3600) -> AppSide:
    """A fresh world whose GitHub takes only this App's tokens."""
    world = standin.reset()
    world.app = AppSide(APP_ID, key.private.public_key(), token_seconds=token_seconds)
    return world.app


def app_tracker(
    standin: StandIn,
    key: AppKeyFile,
    *,
    installations: Mapping[str, int] | None = None,
    margin: float = 300.0,
    app_id: int = APP_ID,
) -> GhTracker:
    """`GhTracker` as the container builds it in App mode: the JWT signed on GitHub's clock (the
    world's), tokens kept on the machine's monotonic clock, as the stand-in expires them."""
    world = standin.world

    def github_now() -> float:
        return world.now.timestamp()

    app = GitHubApp(AppKey.read(app_id, key.path), installations=dict(installations or {}), refresh_margin=margin)
    return GhTracker(
        host=standin.host,
        env=standin.gh_env(),  # the operator's token is there too: App mode must not send it
        timeout=20,
        clock=github_now,
        monotonic=SystemClock().monotonic,
        app=app,
    )
