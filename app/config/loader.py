"""Finding and reading the configuration; anything wrong with it is a `ConfigError`, one line per problem."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from app.config.errors import describe
from app.config.files import DEFAULT_PATH, USER_PATH, ConfigError, locate, user_path
from app.config.settings import EMBEDDED_DEFAULTS, Settings

__all__ = [
    "BUILT_IN",
    "DEFAULT_PATH",
    "USER_PATH",
    "ConfigError",
    "Loaded",
    "load",
    "locate",
    "read_document",
    "user_path",
]

BUILT_IN = "built-in defaults"


@dataclass(frozen=True, slots=True)
class Loaded:
    settings: Settings
    path: Path | None  # None: no file, the embedded defaults

    @property
    def origin(self) -> str:
        return str(self.path.absolute()) if self.path else BUILT_IN


def load(flag: str | None = None, *, users: bool = True) -> Loaded:
    """Settings from the file `locate` finds (or the built-in defaults), then the environment.

    Reads only: nothing is created, so a refused config leaves no trace on disk.
    """
    found, _ = locate(flag, os.environ, users=users)
    document = read_document(found) if found else EMBEDDED_DEFAULTS
    try:
        return Loaded(settings=Settings(**document), path=found)
    except ValidationError as error:
        raise ConfigError(describe(error, origin=str(found) if found else BUILT_IN)) from None


class _StrictLoader(yaml.SafeLoader):
    """Safe YAML that refuses a key given twice (the second would silently win)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"key {key!r} is given twice", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def read_document(path: Path) -> Mapping[str, Any]:
    """The YAML mapping in `path`; an empty file is an empty mapping."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a file") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None
    try:
        document = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise ConfigError(f"{path}: {where}invalid YAML: {error.problem or error.context}") from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: invalid YAML: {error}") from None
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys (got {type(document).__name__})")
    for key in document:
        if not isinstance(key, str):
            raise ConfigError(f"{path}: {key!r}: unknown key")
    return document
