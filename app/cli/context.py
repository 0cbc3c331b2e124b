"""What every command gets: the loaded configuration, the container, and the CLI's own errors.

Building the parser imports this module: the configuration (pydantic) and the container (the
adapters) are imported only once a command runs, so `--help` and the parser stay fast.
"""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeAlias

from app.cli.read_views import where_json, where_line
from domain.errors import InvalidRef, LoopError
from domain.refs import ItemSpec

if TYPE_CHECKING:
    from argparse import _SubParsersAction

    from app.config.loader import Loaded
    from app.config.settings import Settings
    from app.container import Container

Handler = Callable[[argparse.Namespace, "CliContext"], int]
Commands: TypeAlias = "_SubParsersAction[Parser]"


class UsageProblem(LoopError):
    """The command line itself is wrong (exit status 2)."""


class NotWired(LoopError):
    """A command whose use case is not connected yet (exit status 1)."""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit status 2 (see `app.cli.main.main`)."""

    def error(self, message: str) -> NoReturn:
        subcommand = self.prog.partition(" ")[2]  # `main` prefixes the program's name
        raise UsageProblem(f"{subcommand + ': ' if subcommand else ''}{message} (see {self.prog} --help)")


class CliContext:
    """The configuration, loaded once and only when a command runs; the container, built lazily."""

    def __init__(self, *, config_flag: str | None, users_config: bool = True) -> None:
        self._config_flag = config_flag
        self._users_config = users_config  # False: the demo and the sandbox (`locate`)

    @cached_property
    def loaded(self) -> Loaded:
        import os

        from app.config import snapshot
        from app.config.loader import load

        loaded = load(self._config_flag, users=self._users_config)
        snapshot.write(loaded, os.environ)  # what `status`, `sessions list` and `events` start from next time
        return loaded

    @property
    def settings(self) -> Settings:
        return self.loaded.settings

    @property
    def config_path(self) -> Path | None:
        """The file read, absolute; None: the built-in demo configuration."""
        return self.loaded.path.absolute() if self.loaded.path else None

    @property
    def state_root(self) -> Path:
        return self.settings.state_root.absolute()

    def where_line(self) -> str:
        """What a command on a terminal says first: the file it read and the state it works on."""
        return where_line(self.config_path, self.state_root)

    def where_json(self) -> dict[str, str | None]:
        """The same as fields of a `--json` object (`config` null: the built-in demo configuration)."""
        return where_json(self.config_path, self.state_root)

    def resolve_items(self, args: argparse.Namespace) -> None:
        """Turn every work item the command line gave (`#1`, `owner/repo#1`, a URL) into its full ref,
        against the watched repositories; one several could mean is a usage error listing them."""
        watched = [source.repo for source in self.settings.sources()]
        host = self.settings.integrations.github.host
        for name, value in vars(args).items():
            try:
                if isinstance(value, ItemSpec):
                    setattr(args, name, value.resolve(watched, host=host))
                elif isinstance(value, list) and value and all(isinstance(v, ItemSpec) for v in value):
                    setattr(args, name, [spec.resolve(watched, host=host) for spec in value])
            except InvalidRef as error:
                subcommand = args.parser.prog.partition(" ")[2]
                raise UsageProblem(f"{subcommand}: argument --{name.replace('_', '-')}: {error}") from None

    @cached_property
    def container(self) -> Container:
        # imported here: `--help`, `--version` and a refused config never load the adapters
        from app.container import Container

        return Container(settings=self.settings)

    def provided(self, name: str) -> Any:
        """The container's `name` provider, resolved; `NotWired` when the container has none."""
        provider = getattr(self.container, name, None)
        if provider is None:
            raise NotWired(f"the container provides no `{name}`")
        return provider()


def work_item(text: str) -> ItemSpec:
    """argparse type for `--work-item`: a bad ref is a usage error naming the forms; the handler
    gets a `WorkItemRef` (`CliContext.resolve_items`, once the configuration is loaded)."""
    try:
        return ItemSpec.parse(text)
    except InvalidRef as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def command(commands: Commands, name: str, handler: Handler, text: str) -> Parser:
    """Add one subcommand whose `handler(args, context)` returns the exit status. `text` is its help:
    the first line is what the list of commands says of it; after a blank line, its description
    (`name --help`; the first line again when there is none). Indented as a docstring is."""
    summary, _, description = inspect.cleandoc(text).partition("\n\n")
    parser = commands.add_parser(
        name, help=summary, description=description or summary, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.set_defaults(handler=handler, parser=parser)
    return parser


def group(commands: Commands, name: str, text: str) -> Commands:
    """Add a command with subcommands of its own (`sessions list`, `sandbox new`, ...)."""
    parser = commands.add_parser(name, help=text, description=text)
    parser.set_defaults(parser=parser)
    return parser.add_subparsers(dest=f"{name}_command", metavar="COMMAND", title="commands")
