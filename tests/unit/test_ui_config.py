"""The page's configuration — off by default, loopback unless a token guards it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.test_config import _in_empty_directory, refusal

__all__ = ["_in_empty_directory"]  # autouse: every test here runs in an empty directory


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.7", "::", "example.org"])
def test_without_a_token_another_host_than_loopback_is_refused_naming_the_key(host: str) -> None:
    assert refusal(f"ui: {{enabled: true, host: '{host}'}}") == (
        f"c.yaml: ui.host: without ui.token only a loopback address may be bound (got {host!r})"
    )


def test_with_a_token_any_host_may_be_bound() -> None:
    from app.config.loader import load

    Path("c.yaml").write_text("ui: {enabled: true, host: '0.0.0.0', token: s3cret-s3cret-s3cret}\n")
    ui = load("c.yaml").settings.ui
    assert (ui.enabled, ui.host, ui.token.get_secret_value()) == (True, "0.0.0.0", "s3cret-s3cret-s3cret")


def test_the_page_is_off_by_default_on_loopback() -> None:
    from app.config.loader import load

    Path("c.yaml").write_text("{}\n")
    ui = load("c.yaml").settings.ui
    assert (ui.enabled, ui.host, ui.token.get_secret_value()) == (False, "127.0.0.1", "")


def test_allowed_hosts_are_read_in_lower_case_and_a_url_or_a_path_is_refused_naming_the_key() -> None:
    from app.config.loader import load

    Path("c.yaml").write_text("ui: {allowedHosts: [Fleet.Example.org, 'fleet.example.org:8443', '[::1]:80']}\n")
    assert load("c.yaml").settings.ui.allowed_hosts == ("fleet.example.org", "fleet.example.org:8443", "[::1]:80")
    assert refusal("ui: {allowedHosts: ['http://fleet.example.org/']}") == (
        "c.yaml: ui.allowedHosts[0]: must be a host name or address, with a port or not, as in a URL"
        " (got 'http://fleet.example.org/')"
    )
