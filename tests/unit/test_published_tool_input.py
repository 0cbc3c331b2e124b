"""What a request's comment publishes of a tool's input: secret-shaped values redacted, a file
write shown by its path, its size and a short redacted excerpt, and ordinary text as it is."""

from __future__ import annotations

import json

import pytest

from domain.asks import Ask, ask_comment
from domain.redaction import redact
from domain.refs import WorkItemRef

ITEM = WorkItemRef.parse("github:acme/widgets#7")


def published(tool: str, tool_input: dict[str, object]) -> str:
    return ask_comment(ITEM, Ask("k", tool, tool_input), wait_seconds=600, number=1)


def shown_json(body: str) -> dict[str, object]:
    inside = body.split("```json\n", 1)[1].split("\n```", 1)[0]
    loaded = json.loads(inside)
    assert isinstance(loaded, dict)
    return loaded


SECRETS = {
    "ghp": "ghp_" + "A1b2C3d4" * 5,
    "gho": "gho_" + "Z9y8X7w6" * 5,
    "ghs": "ghs_" + "Q1w2E3r4" * 5,
    "ghu": "ghu_" + "T5y6U7i8" * 5,
    "github_pat": "github_pat_11ABCDEFG0" + "x7Y" * 20,
    "anthropic": "sk-ant-api03-" + "k9L" * 30,
    "openai": "sk-" + "P0o9I8u7" * 6,
    "openai-project": "sk-proj-" + "M1n2B3v4" * 6,
    "aws-key-id": "AKIAIOSFODNN7EXAMPLE",
    "stripe-live": "sk_live_" + "4eC39HqL" * 3,
    "stripe-restricted": "rk_live_" + "51Hx9QeL" * 3,
    "stripe-test": "sk_test_" + "BQokikJO" * 3,
    "hugging-face": "hf_" + "jKlMnOpQ" * 4 + "rs",
    "npm": "npm_" + "Aa1Bb2Cc3" * 4,
    "docker-hub": "dckr_pat_" + "Xy7-Zw8_" * 3,
    "gitlab": "glpat-" + "x9Yz8Wv7" * 3,
    "slack-bot": "xoxb-" + "123456789012-" * 2 + "AbCdEfGhIjKl",
    "slack-user": "xoxp-" + "123456789012-" * 3 + "AbCdEf",
    "vault": "hvs." + "CAESIJk7Lm9Np" * 3,
}


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_a_token_in_a_bash_command_line_is_not_published(name: str) -> None:
    secret = SECRETS[name]

    body = published("Bash", {"command": f"curl -s https://api.example.com/x?t={secret} | jq .", "timeout": 30})

    assert secret not in body and secret[8:24] not in body
    assert shown_json(body)["command"] == "curl -s https://api.example.com/x?t=[redacted] | jq ."


@pytest.mark.parametrize(
    ("line", "hidden", "kept"),
    [
        ("export GITHUB_TOKEN=abc123def456", "abc123def456", "export GITHUB_TOKEN=[redacted]"),
        ("DB_PASSWORD='hunter2 and more' ./run", "hunter2", "DB_PASSWORD='[redacted]' ./run"),
        (
            'AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG/bPxRfiCY"',
            "wJalrXUtnFEMI",
            'AWS_SECRET_ACCESS_KEY="[redacted]"',
        ),
        ("mysql --password=s3cr3t -u root", "s3cr3t", "mysql --password=[redacted] -u root"),
        ("curl -H 'Authorization: Bearer eyJhbGciOi.x.y' u", "eyJhbGciOi", "curl -H 'Authorization: [redacted]' u"),
        ('curl -H "authorization: token abcdef0123" u', "abcdef0123", 'curl -H "authorization: [redacted]" u'),
        ("curl -H 'Authorization: Basic dXNlcjpwYXNz' u", "dXNlcjpwYXNz", "curl -H 'Authorization: [redacted]' u"),
        ("curl -H 'X-Api-Key: 9f8e7d6c5b4a' u", "9f8e7d6c5b4a", "curl -H 'X-Api-Key: [redacted]' u"),
        (
            "git clone https://bob:pa55word@git.example.com/r",
            "pa55word",
            "git clone https://bob:[redacted]@git.example.com/r",
        ),
        ("curl -u bob:pa55word https://x", "pa55word", "curl -u bob:[redacted] https://x"),
        (
            "TOKEN=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.dozjgNryP4J3jVmNHl0w5N x",
            "eyJhbGciOiJIUzI1NiJ9",
            "TOKEN=[redacted] x",
        ),
        (
            "aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "wJalrXUtnFEMI",
            "aws configure set aws_secret_access_key [redacted]",
        ),
        (
            "aws configure set aws_secret_access_key hunter2 --profile ci",
            "hunter2",
            "aws configure set aws_secret_access_key [redacted] --profile ci",
        ),
        ("mysql --password hunter2 -u root", "hunter2", "mysql --password [redacted] -u root"),
        ("vault login --token X1y2 && ls", "X1y2", "vault login --token [redacted] && ls"),
        ("tool -api-key 'two words' run", "two words", "tool -api-key '[redacted]' run"),
        (
            "echo //registry.npmjs.org/:_authToken=f00dcafe1234 >> .npmrc",
            "f00dcafe1234",
            "echo //registry.npmjs.org/:_authToken=[redacted] >> .npmrc",
        ),
        (
            "docker login -u bob -p dckr_pat_Xy7-Zw8_Xy7-Zw8_Xy7-Zw8_",
            "Xy7-Zw8_Xy7",
            "docker login -u bob -p [redacted]",
        ),
        (
            "curl https://api.stripe.com/v1/charges -u sk_live_4eC39HqL4eC39HqL4eC39HqL:",
            "4eC39HqL",
            "curl https://api.stripe.com/v1/charges -u [redacted]:",
        ),
    ],
)
def test_a_secret_named_or_shaped_in_a_command_line_is_not_published(line: str, hidden: str, kept: str) -> None:
    body = published("Bash", {"command": line})

    assert hidden not in body and shown_json(body)["command"] == kept


def test_a_private_key_block_is_not_published() -> None:
    key = "\n".join(
        [
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            "b3BlbnNzaC1rZXktdjEAAAAA",
            "QyNTUxOQAAACB",
            "-----END OPENSSH PRIVATE KEY-----",
        ]
    )

    body = published("Bash", {"command": f"cat > id <<EOF\n{key}\nEOF"})

    assert "b3BlbnNzaC1rZXktdjEAAAAA" not in body and "QyNTUxOQAAACB" not in body


def test_a_write_of_an_env_file_shows_its_path_size_and_a_redacted_excerpt() -> None:
    content = (
        "PORT=3000\nAPP=my-app-staging-v2\nSTRIPE=rk_live_51Hx9QeLkd8fJ2mZpQ7\nOPENAI_API_KEY=sk-abc\n" + "X=1\n" * 400
    )

    body = published("Write", {"file_path": "/srv/app/.env", "content": content})

    assert "rk_live_51Hx9QeLkd8fJ2mZpQ7" not in body and "sk-abc" not in body
    shown = shown_json(body)
    assert shown["file_path"] == "/srv/app/.env"
    assert shown["content"] == {
        "bytes": len(content),
        "lines": 404,
        "first_lines": [
            "PORT=3000",
            "APP=my-app-staging-v2",
            "STRIPE=[redacted]",
            "OPENAI_API_KEY=[redacted]",
            "X=1",
            "X=1",
        ],
    }


def test_an_edit_shows_its_path_and_short_excerpts_of_both_sides() -> None:
    old, new = "def f():\n    return 1\n", "def f():\n" + "    x = 1\n" * 100 + "    return 2  # api_key = 'zz9'\n"

    body = published("Edit", {"file_path": "src/f.py", "old_string": old, "new_string": new, "replace_all": False})

    shown = shown_json(body)
    assert shown["file_path"] == "src/f.py" and shown["replace_all"] is False
    assert shown["old_string"] == {"bytes": len(old), "lines": 2, "first_lines": ["def f():", "    return 1"]}
    assert isinstance(shown["new_string"], dict) and shown["new_string"]["lines"] == 102
    assert len(body) < 3000 and "zz9" not in body


def test_a_multi_edit_and_a_notebook_edit_show_excerpts_too() -> None:
    edits = [{"old_string": "a = 1\n" * 50, "new_string": "TOKEN = 'ghp_" + "x1Y2" * 10 + "'\n"}]

    multi = shown_json(published("MultiEdit", {"file_path": "m.py", "edits": edits}))
    notebook = shown_json(published("NotebookEdit", {"notebook_path": "n.ipynb", "new_source": "print(1)\n" * 80}))

    (edit,) = multi["edits"]  # type: ignore[misc]
    assert edit["old_string"]["lines"] == 50 and edit["new_string"]["first_lines"] == ["TOKEN = '[redacted]'"]
    assert notebook["new_source"]["lines"] == 80  # type: ignore[index]


@pytest.mark.parametrize(
    "command",
    [
        "ls -la && git status",
        'git commit -m "Fix the login form: keys are trimmed"',
        "python -c 'tokens = text.split(); token_count = len(tokens)'",
        "grep -rn 'password' src/ | head",
        "npm test -- --grep 'secret sauce'",
        "echo $GITHUB_TOKEN | wc -c",
        'if [ "$password" == "" ]; then exit 1; fi',
        "api_key = os.environ['API_KEY']",
        "sed -n 1,20p docs/keys.md",
        "psql -c 'ALTER TABLE t ADD PRIMARY KEY (id)'; echo 'Primary key: id'",
        "node -e 'const apiKey = process.env.API_KEY; console.log(apiKey.length)'",
        "aws s3 ls --region eu-west-1",
        'git commit -m "rotate the token"',
        "grep -rn password src/",
        "pytest -k token",
        "git commit -m 'set GITHUB_TOKEN before the push, then the password reset'",
        "python -c 'if api_key is None: raise SystemExit(1)'",
        "mkdir -p build && ssh -p 2222 host",
        "echo $GITHUB_TOKEN $API_KEY",
        "gpg --recv-keys 0xABCDEF12 --password-file pw.txt",
        "npm config get //registry.npmjs.org/:_authToken",
        "docker secret create db_password ./pw.txt && gh auth login && kubectl get secret my-secret",
    ],
)
def test_ordinary_command_lines_are_published_as_they_are(command: str) -> None:
    assert shown_json(published("Bash", {"command": command}))["command"] == command


def test_a_token_in_a_question_the_agent_asks_is_not_published() -> None:
    token = SECRETS["ghp"]
    questions = [{"question": f"Use {token} to push?", "options": [{"label": "yes"}, {"label": "no"}]}]

    body = published("AskUserQuestion", {"questions": questions})

    assert token not in body and "Use [redacted] to push?" in body and "1. yes" in body


def test_a_long_hostile_command_line_is_redacted_whole() -> None:
    # runs of name characters, separators and spaces each many kilobytes long: every pattern must
    # start a name only where its run starts, or a run is tried from each of its characters
    hostile = " ".join(
        [
            "--password" + " " * 20_000,
            "a_" * 20_000,
            "x-" * 20_000,
            "token:" * 10_000,
            "=" * 20_000,
            "password " * 5_000,
        ]
    )
    command = hostile + " --token " + SECRETS["ghp"][4:]

    shown = redact(command)

    assert shown.endswith(" --token [redacted]") and len(command) > 200_000


def _nested(depth: int) -> dict[str, object]:
    value: dict[str, object] = {"leaf": "x"}
    for _ in range(depth):
        value = {"a": value}
    return value


def test_an_input_nested_past_what_is_shown_is_cut_with_a_note_never_raising() -> None:
    body = published("mcp__x__y", {"query": "ok", "deep": _nested(5000)})

    shown = shown_json(body)
    assert shown["query"] == "ok"
    assert "nested too deep" in body and '"leaf"' not in body
