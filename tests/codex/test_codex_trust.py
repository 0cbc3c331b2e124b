"""`CodexTrust`: the folder's record appended to config.toml under a lock,
every other byte kept, a user's other decision never overwritten."""

from __future__ import annotations

import threading
import tomllib
from pathlib import Path

import pytest

from adapters.agents.agent_config import codex_config_file
from adapters.harnesses.codex.trust import CodexTrust
from domain.errors import TrustError

USER = (
    '# my settings\nmodel = "o3"\n\n[projects."/elsewhere"]\ntrust_level = "trusted"\n\n[tui]\nnotifications = true\n'
)


def test_a_new_folder_is_appended_as_trusted_and_every_other_byte_is_kept(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(USER, encoding="utf-8")
    config.chmod(0o640)
    folder = tmp_path / "work"
    folder.mkdir()
    assert CodexTrust(config, settle_seconds=0.01).trust(str(folder)) is True
    text = config.read_text(encoding="utf-8")
    assert text.startswith(USER)
    assert tomllib.loads(text)["projects"][str(folder)] == {"trust_level": "trusted"}
    assert config.stat().st_mode & 0o777 == 0o640


def test_a_folder_trusted_already_is_not_written_again(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    assert CodexTrust(config, settle_seconds=0.01).trust(str(tmp_path)) is True
    before = config.stat().st_ino, config.read_bytes()
    assert CodexTrust(config, settle_seconds=0.01).trust(str(tmp_path)) is False
    assert (config.stat().st_ino, config.read_bytes()) == before


def test_the_record_is_made_for_the_resolved_folder(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    config = tmp_path / "config.toml"
    CodexTrust(config, settle_seconds=0.01).trust(str(tmp_path / "link"))
    assert list(tomllib.loads(config.read_text())["projects"]) == [str(tmp_path / "real")]


@pytest.mark.parametrize(
    "content",
    [
        '[projects."{folder}"]\ntrust_level = "untrusted"\n',  # the user's own decision
        "model = [unclosed\n",  # not TOML
        'projects = {{ "/x" = {{ trust_level = "trusted" }} }}\n',  # inline: a table cannot be appended
    ],
)
def test_a_file_it_cannot_safely_extend_is_refused_and_left_as_it_was(tmp_path: Path, content: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(content.format(folder=tmp_path), encoding="utf-8")
    before = config.read_bytes()
    with pytest.raises(TrustError, match=str(config)):
        CodexTrust(config, settle_seconds=0.01).trust(str(tmp_path))
    assert config.read_bytes() == before


def test_the_file_is_codex_home_config_toml() -> None:
    assert codex_config_file({"CODEX_HOME": "/h/c"}) == Path("/h/c/config.toml")
    assert codex_config_file({}).parts[-2:] == (".codex", "config.toml")


def test_concurrent_trusts_and_another_writers_change_are_all_kept(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(USER, encoding="utf-8")
    folders = [tmp_path / f"f{n}" for n in range(8)]
    for folder in folders:
        folder.mkdir()
    stop = threading.Event()

    def other_writer() -> None:  # Codex persisting a key of its own, the whole file rewritten, no lock
        n = 0
        while not stop.is_set():
            text = config.read_text(encoding="utf-8")
            part = tmp_path / "other.part"
            part.write_text(text if "[other]" in text else text + f"\n[other]\nn = {n}\n", encoding="utf-8")
            part.replace(config)
            n += 1
            stop.wait(0.002)

    writer = threading.Thread(target=other_writer)
    writer.start()
    threads = [threading.Thread(target=CodexTrust(config, settle_seconds=0.01).trust, args=(str(f),)) for f in folders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stop.set()
    writer.join()
    parsed = tomllib.loads(config.read_text(encoding="utf-8"))
    assert {str(f) for f in folders} <= set(parsed["projects"]) and "other" in parsed
