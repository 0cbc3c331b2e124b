"""Environment overrides: `THE_LOOP_<KEY>__<KEY>…` names a key path of the configuration file."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, get_args, get_origin

from pydantic import BaseModel
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

from app.config.files import CONFIG_PATH_VARIABLE

ENV_PREFIX = "THE_LOOP_"
ENV_DELIMITER = "__"


def env_name(path: tuple[str, ...]) -> str:
    """The variable that sets the key at `path` (e.g. `polling.intervalSeconds`)."""
    return ENV_PREFIX + ENV_DELIMITER.join(part.upper() for part in path)


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        model = _model_of(arg)
        if model is not None:
            return model
    return None


def _step(annotation: Any, segment: str) -> tuple[str, Any]:
    """The key `segment` names under `annotation`, spelled as in the file, and its type."""
    if get_origin(annotation) is dict or (get_origin(annotation) is None and annotation is dict):
        return segment.lower(), get_args(annotation)[-1] if get_args(annotation) else Any
    model = _model_of(annotation) if get_origin(annotation) is not tuple else None
    if model is not None:
        for name, field in model.model_fields.items():
            alias = field.alias or name
            if alias.lower() == segment.lower():
                return alias, field.annotation
    return segment.lower(), None  # not a key: validation reports it by name


def _is_structured(annotation: Any) -> bool:
    return (get_origin(annotation) or annotation) in {tuple, list, dict} or _model_of(annotation) is not None


def _document_path(settings_cls: type[BaseModel], variable: str) -> tuple[tuple[str, ...], Any]:
    annotation: Any = settings_cls
    path: list[str] = []
    for segment in variable[len(ENV_PREFIX) :].split(ENV_DELIMITER):
        key, annotation = _step(annotation, segment)
        path.append(key)
    return tuple(path), annotation


def _decode(value: str, annotation: Any) -> Any:
    if not _is_structured(annotation):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value  # validation then says what type was expected


class LoopEnvironment(PydanticBaseSettingsSource):
    """Reads every `THE_LOOP_*` variable but the config path as a key of the document."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str] | None = None) -> None:
        super().__init__(settings_cls)
        self._environ = os.environ if environ is None else environ

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ builds the whole document

    def __call__(self) -> dict[str, Any]:
        document: dict[str, Any] = {}
        for variable, value in sorted(self._environ.items()):
            upper = variable.upper()
            if not upper.startswith(ENV_PREFIX) or upper == CONFIG_PATH_VARIABLE:
                continue
            path, annotation = _document_path(self.settings_cls, upper)
            node = document
            for key in path[:-1]:
                if not isinstance(node.get(key), dict):
                    node[key] = {}
                node = node[key]
            node[path[-1]] = _decode(value, annotation)
        return document


def keys_at(settings_cls: type[BaseModel], path: tuple[str | int, ...]) -> list[str]:
    """The keys a document may hold at `path` (used to suggest one for a misspelt key)."""
    annotation: Any = settings_cls
    for part in path:
        if isinstance(part, int):
            args = get_args(annotation)
            annotation = args[0] if args else None
        else:
            _, annotation = _step(annotation, part)
    model = _model_of(annotation) if get_origin(annotation) is not dict else None
    return [field.alias or name for name, field in model.model_fields.items()] if model else []
