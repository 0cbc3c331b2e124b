"""docs/config.md is generated from the settings model and covers every key an operator is documented to set."""

from __future__ import annotations

from pathlib import Path

import yaml

from app.config.reference import DOC_PATH, EXAMPLE, render_config_reference
from app.config.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTED_KEYS = [
    "state.root",
    "polling.intervalSeconds",
    "polling.maxRetries",
    "polling.sources[].provider",
    "polling.sources[].repos",
    "polling.sources[].label",
    "routing.authorizedUsers",
    "routing.spawnOnUnmatched",
    "routing.defaultHarness",
    *(f"routing.harnesses.<name>.{k}" for k in ("binary", "args", "sessionIdArgs", "resumeArgs", "submitDelayMs")),
    "routing.dispatchTimeoutSeconds",
    "routing.maxConcurrentDispatches",
    "routing.spawnWorkdir",
    *(
        f"routing.tmux.{k}"
        for k in (
            "socketName",
            "remainOnExit",
            "resumeOnRespawn",
            "resumeProbeSeconds",
            "killHarnessOnClose",
            "keepSessionOnClose",
            "harnessKillGraceSeconds",
        )
    ),
    *(f"routing.reactions.{k}" for k in ("enabled", "started", "succeeded", "failed")),
    *(f"routing.workspace.{k}" for k in ("mode", "cloneUrl", "setup", "removeOnClose")),
    *(f"webhooks.ghWebhook.{k}" for k in ("enabled", "host", "port", "secret")),
    "integrations.github.cli.binary",
    "integrations.github.host",
    "eventLog.path",
]


def test_docs_config_md_is_what_the_generator_writes() -> None:
    on_disk = (ROOT / DOC_PATH).read_text(encoding="utf-8")
    assert on_disk == render_config_reference(), "docs/config.md is stale: run `python -m app.config.reference`"


def test_the_reference_has_a_row_for_every_key_of_design_section_8() -> None:
    page = render_config_reference()
    assert [key for key in DOCUMENTED_KEYS if f"| `{key}` |" not in page] == []


def test_the_example_on_the_page_is_a_valid_configuration() -> None:
    settings = Settings(**yaml.safe_load(EXAMPLE))
    assert settings.harness_spec().name == "claude"


def test_the_built_in_harness_table_has_a_column_for_every_harness_key() -> None:
    from app.config.harnesses import HarnessSettings

    page = render_config_reference()
    (header,) = [line for line in page.splitlines() if line.startswith("| name | binary |")]
    columns = [cell.strip() for cell in header.strip("|").split("|")][1:]
    assert columns == [field.alias or name for name, field in HarnessSettings.model_fields.items()]
    (claude,) = [line for line in page.splitlines() if line.startswith("| `claude` |")]
    cells = [cell.strip() for cell in claude.strip().strip("|").split(" | ")][1:]
    assert cells[columns.index("trustWorkdir")] == "`true`"


def test_the_keys_of_a_block_unset_by_default_have_rows_of_their_own() -> None:
    page = render_config_reference()
    keys = ("", ".id", ".privateKeyFile", ".installations", ".tokenRefreshMarginSeconds")
    assert [k for k in keys if f"| `integrations.github.app{k}` |" not in page] == []
