"""The settings model: the documented defaults (`docs/config.md`), the embedded default, merges,
env overrides, helpers."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import ValidationError

from app.config.settings import EMBEDDED_DEFAULTS, Settings
from domain.authorize import Permission, Standing, is_authorized
from domain.model import Reaction, Source, SpawnMode
from domain.refs import RepoRef, WorkItemRef


@pytest.fixture(autouse=True)
def _no_loop_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    import os

    for name in [n for n in os.environ if n.upper().startswith("THE_LOOP_")]:
        monkeypatch.delenv(name)
    yield


def settings(**document: Any) -> Settings:
    return Settings(**document)


def test_every_key_defaults_as_design_section_8_says() -> None:
    s = settings()
    assert (s.state.root, s.polling.interval_seconds, s.polling.max_retries, s.polling.sources) == (
        ".the-loop",
        60,
        3,
        (),
    )
    r = s.routing
    assert (r.authorized_users, r.spawn_on_unmatched, r.default_harness) == ((), SpawnMode.LABELED, "demo")
    assert (r.dispatch_timeout_seconds, r.max_concurrent_dispatches, r.spawn_workdir) == (1800, 4, ".")
    t = r.tmux
    assert (t.socket_name, t.remain_on_exit, t.resume_on_respawn, t.resume_probe_seconds) == ("", True, True, 3)
    assert (t.kill_harness_on_close, t.keep_session_on_close, t.harness_kill_grace_seconds) == (True, True, 10)
    assert (r.reactions.enabled, r.reactions.started, r.reactions.succeeded, r.reactions.failed) == (
        True,
        "eyes",
        "hooray",
        "confused",
    )
    w = s.webhooks.gh_webhook
    assert (w.enabled, w.host, w.port, w.secret.get_secret_value()) == (False, "127.0.0.1", 8787, "")
    assert (w.max_body_bytes, w.read_timeout_seconds, w.max_connections) == (1024 * 1024, 10, 256)
    assert (s.integrations.github.cli.binary, s.integrations.github.host, s.event_log.path) == ("gh", "github.com", "")


def test_an_empty_authorized_list_authorizes_nobody() -> None:
    assert settings().authorized_users == frozenset()


def test_the_embedded_default_watches_the_sandbox_as_demo_on_a_private_server() -> None:
    s = settings(**EMBEDDED_DEFAULTS)
    assert s.sources() == [Source(provider="sandbox", repo=RepoRef.parse("sandbox/demo"), label="loop")]
    assert (s.authorized_users, s.tmux_socket) == (frozenset({"demo"}), "the-loop-demo")
    argv = (sys.executable, "-m", "app.demo.harness", "--session-id", "id")
    assert s.harness_spec().argv("id", resume=False) == argv


def test_the_event_log_lives_under_the_state_root_unless_set() -> None:
    assert str(settings(state={"root": "st"}).event_log_path) == "st/logs/events.jsonl"
    assert str(settings(eventLog={"path": "x.jsonl"}).event_log_path) == "x.jsonl"


def test_an_operator_harness_merges_key_by_key_over_the_builtin() -> None:
    s = settings(routing={"harnesses": {"claude": {"args": ["--model", "opus"]}}})
    spec = s.harness_spec("claude")
    mode = ("--permission-mode", "auto")  # the built-in's own key, kept
    assert spec.argv("S", resume=True) == ("claude", "--model", "opus", *mode, "--resume", "S")
    assert spec.argv("S", resume=False) == ("claude", "--model", "opus", *mode, "--session-id", "S")


def test_an_operator_entry_merges_key_by_key_over_the_new_builtins() -> None:
    s = settings(
        routing={
            "harnesses": {
                "gemini": {"args": ["--model", "gemini-2.5-pro"], "readySeconds": 40},
                "opencode": {"binary": "/opt/opencode/bin/opencode"},
            }
        }
    )
    gemini, opencode = s.harness_spec("gemini"), s.harness_spec("opencode")
    resumed = ("gemini", "--model", "gemini-2.5-pro", "--resume", "S", "--prompt-interactive")
    assert gemini.argv("S", resume=True) == resumed
    assert (gemini.ready_seconds, gemini.submit_delay_ms) == (40, settings().harness_spec("gemini").submit_delay_ms)
    assert opencode.argv("S", resume=False) == ("/opt/opencode/bin/opencode", "--prompt")


def test_a_new_harness_is_usable_as_the_default() -> None:
    s = settings(routing={"defaultHarness": "aider", "harnesses": {"aider": {"binary": "aider", "submitDelayMs": 50}}})
    assert (s.harness_spec().binary, s.harness_spec().submit_delay_ms, s.harness_spec().can_resume) == (
        "aider",
        50,
        False,
    )


def test_cursor_cannot_resume() -> None:
    assert not settings().harness_spec("cursor").can_resume


def test_resume_on_respawn_off_makes_every_harness_start_fresh() -> None:
    s = settings(routing={"tmux": {"resumeOnRespawn": False}})
    assert not s.harness_spec("claude").can_resume


def test_an_unknown_harness_name_is_a_lookup_error() -> None:
    with pytest.raises(LookupError, match="unknown harness 'nope'"):
        settings().harness_spec("nope")


@pytest.mark.parametrize(
    "document",
    [
        {"routing": {"harnesses": {"aider": {"args": ["x"]}}}},  # new harness, no binary
        {"routing": {"defaultHarness": "aider"}},  # unknown default
        {"routing": {"spawnOnUnmatched": "sometimes"}},
        {"routing": {"authorized_users": ["a"]}},  # snake_case is not a key
        {"polling": {"sources": [{"repos": ["not a repo"], "label": "x"}]}},
        {"polling": {"sources": [{"repos": ["a/b"]}]}},  # label required
        {"routing": {"tmux": {"socketName": "../x"}}},
        {"webhooks": {"ghWebhook": {"enabled": True}}},  # no secret
        {"webhooks": {"ghWebhook": {"maxConnections": 0}}},
        {"webhooks": {"ghWebhook": {"maxBodyBytes": 26 * 1024 * 1024}}},  # over GitHub's own cap
        {"webhooks": {"ghWebhook": {"readTimeoutSeconds": 0}}},
        {"routing": {"reactions": {"started": "thumbsup"}}},
    ],
)
def test_a_bad_document_is_refused(document: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        settings(**document)


def test_sources_expand_every_repository_on_the_configured_host() -> None:
    s = settings(
        integrations={"github": {"host": "ghe.example:8443"}},
        polling={"sources": [{"repos": ["o/a", "github.com/o/b"], "label": "loop"}]},
    )
    assert [str(source.repo) for source in s.sources()] == ["ghe.example:8443/o/a", "o/b"]


def test_the_environment_wins_over_the_document(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THE_LOOP_POLLING__INTERVALSECONDS", "5")
    s = settings(polling={"intervalSeconds": 60, "maxRetries": 7})
    assert (s.polling.interval_seconds, s.polling.max_retries) == (5, 7)


def test_the_environment_reaches_camel_case_top_level_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THE_LOOP_EVENTLOG__PATH", "elsewhere.jsonl")
    assert str(settings().event_log_path) == "elsewhere.jsonl"


def test_the_environment_sets_lists_as_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THE_LOOP_ROUTING__AUTHORIZEDUSERS", '["alice", "bob"]')
    assert settings().authorized_users == frozenset({"alice", "bob"})


def test_spawn_workdir_substitutes_the_slug_and_is_absolute() -> None:
    item = WorkItemRef.parse("github:o/r#3")
    workdir = settings(routing={"spawnWorkdir": "work/{slug}"}).spawn_workdir(item)
    assert workdir.endswith("/work/github-o-r-3") and workdir.startswith("/")


def test_reactions_follow_the_config_and_vanish_when_disabled() -> None:
    assert settings(routing={"reactions": {"succeeded": "rocket"}}).reaction_content(Reaction.SUCCEEDED) == "rocket"
    assert settings(routing={"reactions": {"enabled": False}}).reaction_content(Reaction.STARTED) is None


def test_the_environment_reaches_a_harness_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THE_LOOP_ROUTING__HARNESSES__CLAUDE__BINARY", "claude-nightly")
    argv = ("claude-nightly", "--permission-mode", "auto", "--resume", "S")
    assert settings().harness_spec("claude").argv("S", resume=True) == argv


def test_an_unknown_environment_key_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THE_LOOP_POLLING__INTERVALSECS", "5")
    with pytest.raises(ValidationError, match="intervalsecs"):
        settings()


def test_the_config_path_variable_is_not_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THE_LOOP_CLI_CONFIG", "elsewhere.yaml")
    assert settings().polling.interval_seconds == 60


def test_an_authorized_login_is_scoped_to_its_host_a_bare_one_to_the_configured_host() -> None:
    s = settings(
        integrations={"github": {"host": "GHE.example:8443"}},
        routing={"authorizedUsers": ["alice", "github.com/Bob", "dependabot[bot]"]},
    )
    assert s.authorized.logins_on("ghe.example:8443") == ("alice", "dependabot[bot]")
    assert s.authorized.logins_on("github.com") == ("bob",)


@pytest.mark.parametrize("entry", ["a/b/alice", "ghe.example.com/", "al ice", "host name/alice", ""])
def test_an_authorized_entry_that_is_neither_login_nor_host_slash_login_is_refused(entry: str) -> None:
    with pytest.raises(ValidationError, match="authorizedUsers"):
        settings(routing={"authorizedUsers": [entry]})


def test_a_bare_login_names_the_sandbox_user_too_only_when_a_sandbox_source_is_watched() -> None:
    github = {"provider": "github", "repos": ["acme/widgets"], "label": "loop"}
    sandbox = {"provider": "sandbox", "repos": ["sandbox/demo"], "label": "loop"}
    base = {"integrations": {"github": {"host": "ghe.example.com"}}, "routing": {"authorizedUsers": ["demo"]}}

    with_sandbox = Settings(**base, polling={"sources": [github, sandbox]}).authorized
    without = Settings(**base, polling={"sources": [github]}).authorized

    assert is_authorized("demo", with_sandbox, repo=RepoRef.parse("sandbox/demo"))
    assert is_authorized("demo", with_sandbox, repo=RepoRef.parse("acme/widgets", host="ghe.example.com"))
    assert not is_authorized("demo", without, repo=RepoRef.parse("sandbox/demo"))


def test_routing_authorize_names_a_permission_and_its_users_join_authorized_users() -> None:
    rule = settings(
        routing={
            "authorizedUsers": ["alice"],
            "authorize": {"permission": "maintain", "users": ["bob"], "deny": ["eve"]},
        }
    ).authorized

    assert (rule.permission, rule.logins_on("github.com")) == (Permission.MAINTAIN, ("alice", "bob"))
    assert rule.standing("eve", repo=RepoRef.parse("acme/widgets")) is Standing.DENIED


def test_without_routing_authorize_only_authorized_users_steer_and_no_permission_is_asked() -> None:
    rule = settings(routing={"authorizedUsers": ["alice"]}).authorized

    assert (rule.permission, rule.denied, settings().routing.authorize.cache_seconds) == (None, frozenset(), 600)
