"""`routing.harnesses.<name>.env` and `passEnv`, read from the daemon's environment."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.config.loader import ConfigError, load
from domain.errors import MissingVariable


@pytest.fixture(autouse=True)
def _in_empty_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-user-config"))
    for name in [n for n in os.environ if n.upper().startswith("THE_LOOP_")]:
        monkeypatch.delenv(name)


def loaded(text: str):  # type: ignore[no-untyped-def]
    Path("c.yaml").write_text(text, encoding="utf-8")
    return load("c.yaml").settings


def refusal(text: str) -> str:
    Path("c.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load("c.yaml")
    return str(refused.value)


ENV = """routing:
  harnesses:
    claude:
      env: {ANTHROPIC_BASE_URL: "https://${PROXY_HOST}/v1", DISABLE_AUTOUPDATER: "1"}
      passEnv: [ANTHROPIC_API_KEY]
"""


def test_env_values_take_their_variables_from_the_daemons_environment_and_pass_env_copies() -> None:
    spec = loaded(ENV).harness_spec("claude")
    daemon = {"PROXY_HOST": "proxy.example", "ANTHROPIC_API_KEY": "sk-1", "OTHER": "x"}
    assert spec.environment(daemon) == (
        ("ANTHROPIC_BASE_URL", "https://proxy.example/v1"),
        ("DISABLE_AUTOUPDATER", "1"),
        ("ANTHROPIC_API_KEY", "sk-1"),
    )


def test_a_variable_the_daemon_lacks_is_named_with_its_key_and_no_value() -> None:
    settings = loaded(ENV)
    with pytest.raises(MissingVariable) as missing:
        settings.harness_spec("claude").environment({"ANTHROPIC_API_KEY": "sk-1"})
    assert str(missing.value) == (
        "harness claude: env.ANTHROPIC_BASE_URL needs ${PROXY_HOST}: not set in the daemon's environment"
    )
    assert settings.missing_variables({"PROXY_HOST": "p"}) == [
        "routing.harnesses.claude: passEnv ANTHROPIC_API_KEY: not set in the daemon's environment"
    ]
    assert settings.missing_variables({"PROXY_HOST": "p", "ANTHROPIC_API_KEY": "k"}) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "routing: {harnesses: {claude: {env: {'1X': a}}}}",
            "c.yaml: routing.harnesses.claude.env: '1X': a variable name is letters, digits and '_', not starting "
            "with a digit",
        ),
        (
            "routing: {harnesses: {claude: {passEnv: [THE_LOOP_RECEIPTS]}}}",
            "c.yaml: routing.harnesses.claude.passEnv.THE_LOOP_RECEIPTS: THE_LOOP_ variables are the-loop's own "
            "(its receipt channel)",
        ),
    ],
)
def test_a_bad_variable_name_is_refused_naming_the_key(text: str, message: str) -> None:
    assert refusal(text) == message


def test_a_bad_reference_names_its_key_and_never_echoes_the_value() -> None:
    message = refusal("routing: {harnesses: {claude: {env: {API_KEY: 'sk-hunter2-${oops'}}}}")
    assert (
        message == "c.yaml: routing.harnesses.claude.env.API_KEY: a reference is written ${NAME} (letters, digits, '_')"
    )
    assert "hunter2" not in refusal("routing: {harnesses: {claude: {env: {API_KEY: [sk-hunter2]}}}}")


def test_every_problem_of_a_file_is_said_at_once() -> None:
    message = refusal("polling: {intervalSeconds: soon}\nrouting: {spawnOnUnmatched: sometimes}\nbogus: 1\n")
    assert message.splitlines() == [
        "c.yaml: polling.intervalSeconds: must be a whole number (got 'soon')",
        "c.yaml: routing.spawnOnUnmatched: must be one of never, labeled, always (got 'sometimes')",
        "c.yaml: bogus: unknown key",
    ]
    assert "more problem" not in message
