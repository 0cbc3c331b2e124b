"""adapters/harnesses/codex/hooks.py: the hooks and their trust, as `-c` overrides."""

from __future__ import annotations

import tomllib
from pathlib import Path

from adapters.agents.receipt_line import hook_command
from adapters.harnesses.codex.hooks import EVENTS, SOURCE, arguments, label, trusted_hash


def test_the_trusted_hash_is_the_one_codex_0_169_wrote_when_a_person_trusted_the_hooks() -> None:
    # written by Codex 0.169.0 into config.toml on "Trust all and continue" for hooks given as `-c`
    command = "cat > /tmp/cxrun/rec/$(date +%s%N).json"
    assert trusted_hash("Stop", command) == "sha256:270ad17e88178df45fa9dff5fc514acbd0795ce5030362825215e86dbd29131b"
    assert (
        trusted_hash("SessionStart", command)
        == "sha256:f545f3f4d121488c9c633ac1fda1de3097a668324c1dd261720767ae9f349288"
    )


def test_each_override_is_toml_naming_one_hook_per_event_and_its_state() -> None:
    folder = Path("/state/receipts/o-r-1/spawn 'x'")
    args = arguments(folder)
    assert args[::2] == ("-c",) * (len(EVENTS) + 1)
    parsed = [tomllib.loads(value) for value in args[1::2]]
    hooks = {event: doc["hooks"][event] for doc, event in zip(parsed, EVENTS, strict=False)}
    for groups in hooks.values():
        assert groups == [{"hooks": [{"type": "command", "command": hook_command(folder)}]}]
    state = parsed[-1]["hooks"]["state"]
    assert set(state) == {f"{SOURCE}:{label(event)}:0:0" for event in EVENTS}
    assert state[f"{SOURCE}:user_prompt_submit:0:0"] == {
        "trusted_hash": trusted_hash("UserPromptSubmit", hook_command(folder))
    }
