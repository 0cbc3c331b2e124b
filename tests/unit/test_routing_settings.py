"""`routing.rules` as the configuration reads them: bad rules stop the daemon naming the rule."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from app.cli.main import main
from app.config.settings import Settings
from domain.refs import WorkItemRef
from domain.routing import RepoPattern, Rule


def _settings(routing: dict[str, object], **more: object) -> Settings:
    return Settings.model_validate({"routing": routing, **more})


def test_rules_read_as_the_domain_matches_them_with_a_bare_repository_on_the_configured_host() -> None:
    settings = _settings(
        {
            "rules": [
                {"repos": ["acme/api"], "harness": "claude", "permissionMode": "plan"},
                {"labels": ["Codex"], "harness": "codex"},
            ]
        },
        integrations={"github": {"host": "ghe.example.com"}},
    )

    assert settings.routing_rules == (
        Rule("claude", (RepoPattern("ghe.example.com", "acme", "api"),), frozenset(), "plan"),
        Rule("codex", (), frozenset({"codex"}), ""),
    )
    assert settings.routed_harnesses == ("demo", "claude", "codex")


def test_a_rules_permission_mode_starts_its_harness_with_that_mode_and_the_harness_keeps_its_own() -> None:
    settings = _settings({"rules": [{"repos": ["acme/api"], "harness": "claude", "permissionMode": "plan"}]})

    variant = settings.harness_spec("claude", permission_mode="plan")

    assert variant.args[variant.args.index("--permission-mode") + 1] == "plan"
    own = settings.harness_spec("claude").args
    assert own[own.index("--permission-mode") + 1] == "auto"


@pytest.mark.parametrize(
    ("routing", "says"),
    [
        (
            {"rules": [{"harness": "demo"}, {"labels": ["x"], "harness": "nope"}]},
            "rules[1].harness: unknown harness 'nope'",
        ),
        ({"rules": [{"repos": ["acme/[api"], "harness": "codex"}]}, "routing.rules.0.repos.0"),
        ({"rules": [{"harness": "codex", "permissionMode": "plan"}]}, "rules[0].permissionMode: only a harness"),
        ({"defaultHarness": ""}, "defaultHarness: empty"),
        (
            {
                "harnesses": {"claude": {"args": ["--permission-mode=bypassPermissions"]}},
                "rules": [{"repos": ["acme/api"], "harness": "claude", "permissionMode": "plan"}],
            },
            "rules[0].permissionMode: harnesses.claude.args states --permission-mode itself",
        ),
        ({"rules": [{"labels": ["x"]}]}, "routing.rules.0.harness"),
        ({"rules": [{"harness": "codex", "label": ["x"]}]}, "routing.rules.0.label"),
        ({"rules": [{"harness": "codex", "workspace": "api"}]}, "rules[0].workspace: unknown workspace 'api'"),
        (
            {
                "workspaces": {"api": {"spawnWorkdir": "~/api/{slug}"}},
                "rules": [{"harness": "codex", "workspace": "web"}],
            },
            "rules[0].workspace: unknown workspace 'web' (known: api)",
        ),
        (
            {"workspaces": {"api": {"mode": "worktree", "spawnWorkdir": "~/api"}}, "rules": [{"harness": "codex"}]},
            "routing.workspaces.api\n  Value error, spawnWorkdir: must contain {slug} when mode is worktree",
        ),
        (
            {"workspaces": {"api": {"mode": "none"}}, "rules": [{"harness": "codex"}]},
            "routing.workspaces.api.spawnWorkdir",
        ),
        (
            {"workspaces": {"api": {"spawnWorkdir": "~/api/{slug}", "cloneUrl": "x{nope}"}}},
            "routing.workspaces.api.cloneUrl",
        ),
    ],
)
def test_a_bad_rule_is_a_configuration_error_naming_the_rule(routing: dict[str, object], says: str) -> None:
    with pytest.raises(ValidationError) as raised:
        _settings(routing)

    assert says in str(raised.value)


def test_the_daemon_refuses_to_start_on_a_bad_rule_with_exit_2_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "loop.yaml").write_text(
        "routing:\n  rules:\n    - harness: demo\n    - labels: [x]\n      harness: nope\n"
    )

    code = main(["--config", "loop.yaml", "poll", "--once"])

    assert code == 2
    assert "rules[1].harness: unknown harness 'nope'" in capsys.readouterr().err
    assert not (tmp_path / ".the-loop").exists()  # nothing written


def test_a_rule_naming_a_workspace_reads_as_the_domain_matches_it_and_the_workspace_is_whole() -> None:
    settings = _settings(
        {
            "spawnWorkdir": "~/work/{slug}",
            "workspace": {"mode": "worktree", "setup": "make"},
            "workspaces": {"api": {"spawnWorkdir": "/srv/api/{slug}", "setup": "npm ci"}},
            "rules": [{"repos": ["acme/api"], "harness": "claude", "workspace": "api"}, {"harness": "codex"}],
        }
    )

    assert [rule.workspace for rule in settings.routing_rules] == ["api", ""]
    api = settings.routing.workspaces["api"]
    assert (api.mode.value, api.setup) == ("none", "npm ci")  # a key it does not give has its own default
    item = WorkItemRef.parse("github:acme/api#7")
    assert settings.spawn_workdir(item, "api") == f"/srv/api/{item.slug}"
    assert settings.spawn_workdir(item) == str(Path.home() / "work" / item.slug)


def test_the_daemon_refuses_to_start_on_a_rule_naming_an_unknown_workspace_with_exit_2_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "loop.yaml").write_text("routing:\n  rules:\n    - harness: demo\n      workspace: api\n")

    code = main(["--config", "loop.yaml", "poll", "--once"])

    assert code == 2
    assert "rules[0].workspace: unknown workspace 'api'" in capsys.readouterr().err
    assert not (tmp_path / ".the-loop").exists()
