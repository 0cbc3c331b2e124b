"""Loading the configuration: path resolution, and one clear line naming file and key when bad."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

import app
from app.config.harnesses import BUILTIN_HARNESSES
from app.config.loader import BUILT_IN, DEFAULT_PATH, ConfigError, load, locate, user_path

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _in_empty_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-user-config"))  # the operator's own is not read
    for name in [n for n in os.environ if n.upper().startswith("THE_LOOP_")]:
        monkeypatch.delenv(name)


def refusal(text: str) -> str:
    Path("c.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load("c.yaml")
    return str(refused.value)


def test_the_flag_wins_over_the_variable_and_the_variable_over_the_default() -> None:
    assert locate("a.yaml", {"THE_LOOP_CLI_CONFIG": "b.yaml"}) == (Path("a.yaml"), True)
    assert locate(None, {"THE_LOOP_CLI_CONFIG": "b.yaml"}) == (Path("b.yaml"), True)
    assert locate(None, {"HOME": "/nowhere"}) == (None, False)  # no file: the built-in defaults


def test_the_working_directory_file_then_the_users_is_found() -> None:
    user = Path("xdg") / "the-loop" / "cli-config.yaml"
    user.parent.mkdir(parents=True)
    user.write_text("", encoding="utf-8")
    environ = {"XDG_CONFIG_HOME": str(Path("xdg").absolute()), "HOME": "/nowhere"}
    assert locate(None, environ) == (user.absolute(), False)
    assert locate(None, {**environ, "XDG_CONFIG_HOME": "xdg"}) == (None, False)  # relative: ignored
    DEFAULT_PATH.parent.mkdir()
    DEFAULT_PATH.write_text("", encoding="utf-8")
    assert locate(None, environ) == (DEFAULT_PATH, False)


def test_without_xdg_config_home_the_users_file_is_under_home_dot_config() -> None:
    assert user_path({"HOME": "/home/op"}) == Path("/home/op/.config/the-loop/cli-config.yaml")
    assert user_path({"HOME": "/home/op", "XDG_CONFIG_HOME": ""}) == Path("/home/op/.config/the-loop/cli-config.yaml")


def test_no_file_at_the_default_path_means_the_embedded_defaults() -> None:
    loaded = load()
    assert (loaded.origin, loaded.settings.tmux_socket) == (BUILT_IN, "the-loop-demo")


def test_a_file_at_the_default_path_is_read() -> None:
    DEFAULT_PATH.parent.mkdir()
    DEFAULT_PATH.write_text("polling: {intervalSeconds: 9}\n", encoding="utf-8")
    assert load().settings.polling.interval_seconds == 9


def test_an_empty_file_means_every_key_at_its_default() -> None:
    Path("c.yaml").write_text("", encoding="utf-8")
    assert load("c.yaml").settings.polling.sources == ()


def test_a_file_entry_for_a_builtin_harness_keeps_the_keys_it_does_not_name() -> None:
    Path("c.yaml").write_text("routing: {defaultHarness: codex, harnesses: {codex: {args: [-m, o3]}}}\n")
    spec = load("c.yaml").settings.harness_spec()
    assert (spec.argv("S", resume=False), spec.ready_seconds, spec.can_resume) == (("codex", "-m", "o3"), 30, True)


def test_a_missing_file_given_by_flag_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"^nope\.yaml: no such file$"):
        load("nope.yaml")


def test_a_missing_file_given_by_the_variable_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THE_LOOP_CLI_CONFIG", "gone.yaml")
    with pytest.raises(ConfigError, match=r"^gone\.yaml: no such file$"):
        load()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "routing: {spawnOnUnmatched: sometimes}",
            "c.yaml: routing.spawnOnUnmatched: must be one of never, labeled, always (got 'sometimes')",
        ),
        ("polling: {intervalSecs: 3}", "c.yaml: polling.intervalSecs: unknown key (did you mean intervalSeconds?)"),
        ("polling: {intervalSeconds: soon}", "c.yaml: polling.intervalSeconds: must be a whole number (got 'soon')"),
        (
            "polling: {sources: [{repos: [nope], label: x}]}",
            "c.yaml: polling.sources[0].repos[0]: not a repository 'nope': expected 'owner/repo' or 'host/owner/repo'",
        ),
        (
            "routing: {defaultHarness: zz}",
            f"c.yaml: routing.defaultHarness: unknown harness 'zz' (known: {', '.join(sorted(BUILTIN_HARNESSES))})",
        ),
        (
            "routing: {harnesses: {x: {args: [a]}}}",
            "c.yaml: routing.harnesses.x.binary: required (no built-in harness is named 'x')",
        ),
        ("routing: {authorizedUsers: alice}", "c.yaml: routing.authorizedUsers: must be a list (got 'alice')"),
        (
            "routing: {authorize: {permission: read}}",
            "c.yaml: routing.authorize.permission: must be one of write, maintain, admin (got 'read')",
        ),
        (
            "routing: {authorize: {deny: [a/b/eve]}}",
            "c.yaml: routing.authorize.deny[0]: must be a login, or host/login for a login on another GitHub host "
            "(got 'a/b/eve')",
        ),
        (
            "routing: {authorize: {cacheSeconds: -1}}",
            "c.yaml: routing.authorize.cacheSeconds: must be at least 0 (got -1)",
        ),
        ("webhooks: {ghWebhook: {port: 99999}}", "c.yaml: webhooks.ghWebhook.port: must be at most 65535 (got 99999)"),
        (
            "webhooks: {ghWebhook: {enabled: true}}",
            "c.yaml: webhooks.ghWebhook.secret: required when enabled, unless integrations.github.app.webhookSecret"
            " is set (unsigned deliveries would be accepted)",
        ),
        ("state: {backend: postgres}", "c.yaml: state.dsn: required when backend is postgres"),
        ("state: {backend: mysql}", "c.yaml: state.backend: must be one of sqlite, postgres (got 'mysql')"),
        ("[1, 2]", "c.yaml: the top level must be a mapping of keys (got list)"),
        ("a: [", "c.yaml: line 1, column 5: invalid YAML: expected the node content, but found '<stream end>'"),
        ("polling: {}\npolling: {}", "c.yaml: line 2, column 1: invalid YAML: key 'polling' is given twice"),
        ("bogus: 1", "c.yaml: bogus: unknown key"),
    ],
)
def test_a_bad_file_is_one_line_naming_the_file_and_the_key(text: str, message: str) -> None:
    assert refusal(text) == message


def test_a_bad_secret_is_never_echoed() -> None:
    assert "hunter2" not in refusal("webhooks: {ghWebhook: {secret: [hunter2]}}")


def test_a_bad_dsn_is_never_echoed() -> None:
    assert "hunter2" not in refusal("state: {backend: postgres, dsn: [postgresql://u:hunter2@db/x]}")


def test_the_postgres_backend_reads_its_dsn_from_the_file_or_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    Path("c.yaml").write_text("state: {backend: postgres, dsn: 'host=db dbname=loop'}", encoding="utf-8")
    from_file = load("c.yaml").settings.state
    monkeypatch.setenv("THE_LOOP_STATE__DSN", "host=other dbname=loop")
    from_env = load("c.yaml").settings.state
    assert (from_file.backend, from_file.dsn.get_secret_value(), from_env.dsn.get_secret_value()) == (
        "postgres", "host=db dbname=loop", "host=other dbname=loop",
    )  # fmt: skip


def test_a_bad_value_from_the_environment_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THE_LOOP_POLLING__INTERVALSECONDS", "x")
    with pytest.raises(ConfigError) as refused:
        load()
    assert str(refused.value) == (
        "environment THE_LOOP_POLLING__INTERVALSECONDS: polling.intervalSeconds: must be a whole number (got 'x')"
    )


def test_a_directory_is_not_a_config_file() -> None:
    Path("d").mkdir()
    with pytest.raises(ConfigError, match=r"^d: is a directory"):
        load("d")


def test_the_fallback_version_is_the_one_in_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert app.__version__ == project["version"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "routing: {workspace: {mode: worktree}}",
            "c.yaml: routing.spawnWorkdir: must contain {slug} when workspace.mode is worktree (each item needs its "
            "own folder)",
        ),
        (
            "routing: {workspace: {mode: clone}}",
            "c.yaml: routing.workspace.mode: must be one of none, worktree (got 'clone')",
        ),
        (
            "routing: {workspace: {cloneUrl: 'https://{hostname}/{owner}/{repo}'}}",
            "c.yaml: routing.workspace.cloneUrl: unknown placeholder {hostname} (known: {host}, {owner}, {repo})",
        ),
    ],
)
def test_a_bad_workspace_setting_is_one_line_naming_the_key(text: str, message: str) -> None:
    assert refusal(text) == message


def test_the_workspace_keys_are_read() -> None:
    Path("c.yaml").write_text(
        "routing:\n  spawnWorkdir: ~/agents/{slug}\n  workspace: {mode: worktree, cloneUrl: 'file:///m/{repo}', "
        "setup: npm ci, removeOnClose: true}\n",
        encoding="utf-8",
    )
    workspace = load("c.yaml").settings.routing.workspace
    assert (workspace.mode.value, workspace.clone_url, workspace.setup, workspace.remove_on_close) == (
        "worktree",
        "file:///m/{repo}",
        "npm ci",
        True,
    )


def test_the_github_app_keys_are_read_from_the_file_and_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    Path("c.yaml").write_text(
        "integrations:\n  github:\n    app: {id: 123, privateKeyFile: ~/app.pem,"
        " installations: {acme: 7, acme/x: 8}}\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("THE_LOOP_INTEGRATIONS__GITHUB__APP__TOKENREFRESHMARGINSECONDS", "60")
    app = load("c.yaml").settings.integrations.github.app
    assert app is not None
    assert (app.id, app.private_key_file, app.installations, app.token_refresh_margin_seconds) == (
        123,
        "~/app.pem",
        {"acme": 7, "acme/x": 8},
        60,
    )


def test_the_apps_webhook_secret_alone_lets_the_receiver_serve(monkeypatch: pytest.MonkeyPatch) -> None:
    Path("c.yaml").write_text(
        "webhooks: {ghWebhook: {enabled: true}}\nintegrations: {github: {app: {id: 1, privateKeyFile: k.pem}}}\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("THE_LOOP_INTEGRATIONS__GITHUB__APP__WEBHOOKSECRET", "hunter2")
    app = load("c.yaml").settings.integrations.github.app
    assert app is not None and app.webhook_secret.get_secret_value() == "hunter2"


def test_a_bad_app_webhook_secret_is_never_echoed() -> None:
    text = "integrations: {github: {app: {id: 1, privateKeyFile: k.pem, webhookSecret: [hunter2]}}}"
    assert "hunter2" not in refusal(text)


def test_without_an_app_the_github_calls_are_made_as_gh_is_logged_in() -> None:
    Path("c.yaml").write_text("integrations: {github: {host: ghe.example}}\n", encoding="utf-8")
    assert load("c.yaml").settings.integrations.github.app is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "integrations: {github: {app: {id: 1}}}",
            "c.yaml: integrations.github.app.privateKeyFile: required",
        ),
        (
            "integrations: {github: {app: {id: 1, privateKeyFile: k.pem, installations: {a/b/c: 7}}}}",
            "c.yaml: integrations.github.app.installations.a/b/c: must be owner/repo or owner (got 'a/b/c')",
        ),
        (
            "integrations: {github: {app: {id: 1, privateKeyFile: k.pem, installations: {acme: 0}}}}",
            "c.yaml: integrations.github.app.installations.acme: must be at least 1 (got 0)",
        ),
        (
            "integrations: {github: {app: {id: 1, privateKeyFile: k.pem, tokenRefreshMarginSeconds: 3600}}}",
            "c.yaml: integrations.github.app.tokenRefreshMarginSeconds: must be at most 1800 (got 3600)",
        ),
    ],
)
def test_a_bad_github_app_setting_is_one_line_naming_the_key(text: str, message: str) -> None:
    assert refusal(text) == message
