"""A validated-settings snapshot: what the read-only commands (`status`, `sessions list`, `events`)
need of the configuration, saved by every full load so they can start without pydantic.

Imports the standard library only. The snapshot is used only when its key matches exactly: the
configuration file's absolute path and the sha256 of its bytes, every `THE_LOOP_*` variable, and the
code (the version and the size and time of each module of `app/config` and `domain`). Anything else, and the
command loads the configuration in full, which refuses a bad one as always and writes a new snapshot.

A configuration may hold secrets, so the snapshot keeps only the fields below (never a DSN, the
webhook secret, a harness's command or environment) in `$XDG_CACHE_HOME/the-loop/` (default
`~/.cache/the-loop/`), the folder 0700 and the files 0600. Paths are kept as written (`~`, relative):
they are expanded when used, as the full load's users do.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app import __version__
from app.config.files import locate

if TYPE_CHECKING:
    from app.config.loader import Loaded

FORMAT = 2
_CONFIG_CODE = Path(__file__).resolve().parent
_DOMAIN_CODE = _CONFIG_CODE.parents[1] / "domain"  # the validators use the domain's refs and names


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The settings the read-only commands need, as the last full load of this exact input saw them."""

    config_path: str | None  # absolute; None: the built-in defaults
    state_root: str  # as configured (`state.root`)
    backend: str  # `state.backend`: only sqlite is read from the snapshot
    event_log: str | None  # `eventLog.path` as configured; None: under the state root
    host_id: str | None  # `cluster.hostId`; None: the machine's name
    github_host: str
    repos: tuple[str, ...]  # the watched repositories, for short work-item refs
    interval_seconds: float
    # `sessions list`: what SessionsAdmin.listing is built from
    tmux_socket: str  # `routing.tmux.socketName`
    tmux_timeout: float  # `routing.dispatchTimeoutSeconds`: each tmux call's deadline
    ask_wait_seconds: float  # `routing.askWaitSeconds`: the receipts' reader
    harnesses: dict[str, tuple[str, float]]  # each harness's name: its receipt mode, its ready seconds

    @property
    def state_root_path(self) -> Path:
        return Path(self.state_root).expanduser()

    @property
    def event_log_path(self) -> Path:
        if self.event_log:
            return Path(self.event_log).expanduser()
        return self.state_root_path / "logs" / "events.jsonl"


def cache_dir(environ: Mapping[str, str]) -> Path:
    """`$XDG_CACHE_HOME/the-loop`; an unset, empty or relative variable means ~/.cache."""
    base = environ.get("XDG_CACHE_HOME", "")
    if base and Path(base).is_absolute():
        return Path(base) / "the-loop"
    home = Path(environ["HOME"]) if environ.get("HOME") else Path.home()
    return home / ".cache" / "the-loop"


def key(path: Path | None, environ: Mapping[str, str]) -> str | None:
    """What the snapshot of `path` must have been made from; None when the file cannot be read."""
    digest = hashlib.sha256()
    if path is not None:
        try:
            digest.update(path.read_bytes())
        except OSError:
            return None
    modules = [*_CONFIG_CODE.glob("*.py"), *_DOMAIN_CODE.glob("*.py")]
    code = sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in modules)
    env = sorted((name, value) for name, value in environ.items() if name.upper().startswith("THE_LOOP_"))
    source = {"format": FORMAT, "version": __version__, "code": code, "env": env, "path": _name(path)}
    digest.update(json.dumps(source, sort_keys=True).encode())
    return digest.hexdigest()


def _name(path: Path | None) -> str:
    return str(path.absolute()) if path else ""


def _file(path: Path | None, environ: Mapping[str, str]) -> Path:
    """One snapshot per configuration file: the newest load of it wins."""
    return cache_dir(environ) / "snapshots" / (hashlib.sha256(_name(path).encode()).hexdigest()[:32] + ".json")


def read(flag: str | None, environ: Mapping[str, str]) -> Snapshot | None:
    """The snapshot for the configuration `--config`/the environment/the folders select, or None when
    there is none or it was made from anything else (then load in full)."""
    path, explicit = locate(flag, environ)
    if explicit and path is not None and not path.is_file():
        return None  # the full load says what is wrong with it
    wanted = key(path, environ)
    if wanted is None:
        return None
    try:
        saved = json.loads(_file(path, environ).read_text(encoding="utf-8"))
        if saved.get("key") != wanted:
            return None
        fields = saved["settings"]
        harnesses = {str(name): (str(mode), float(ready)) for name, (mode, ready) in fields["harnesses"].items()}
        return Snapshot(**{**fields, "repos": tuple(fields["repos"]), "harnesses": harnesses})
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def write(loaded: Loaded, environ: Mapping[str, str]) -> None:
    """Save what the read-only commands need of `loaded`; best effort: a cache that cannot be written
    only means the next command loads in full again."""
    settings = loaded.settings
    wanted = key(loaded.path, environ)
    if wanted is None:
        return
    fields: dict[str, Any] = {
        "config_path": _name(loaded.path) or None,
        "state_root": settings.state.root,
        "backend": settings.state.backend,
        "event_log": settings.event_log.path or None,
        "host_id": settings.cluster.host_id or None,
        "github_host": settings.integrations.github.host,
        "repos": [str(source.repo) for source in settings.sources()],
        "interval_seconds": settings.polling.interval_seconds,
        "tmux_socket": settings.routing.tmux.socket_name,
        "tmux_timeout": settings.routing.dispatch_timeout_seconds,
        "ask_wait_seconds": settings.routing.ask_wait_seconds,
        "harnesses": {  # never a harness's binary, arguments or environment
            name: [spec.receipts.value, spec.ready_seconds]
            for name, spec in ((name, settings.harness_spec(name)) for name in settings.harness_names)
        },
    }
    target = _file(loaded.path, environ)
    with contextlib.suppress(OSError, TypeError, ValueError):
        target.parent.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        target.parent.mkdir(mode=0o700, exist_ok=True)
        os.chmod(target.parent.parent, 0o700)
        os.chmod(target.parent, 0o700)
        text = json.dumps({"key": wanted, "settings": fields}, sort_keys=True)
        from adapters.files.atomic import write_whole  # only a full load writes: the lean start does without it

        write_whole(target, text, fsync=False, prefix=".snapshot-")  # 0600
