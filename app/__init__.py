"""the-loop's application layer: use cases, settings, the container and the CLI."""

from __future__ import annotations

# kept equal to pyproject's version; used when the project runs from a checkout, not installed
__version__ = "0.1.0"


def version() -> str:
    """The running version: what the ledger records on abandonment and `--version` prints."""
    # imported here: reading the installed metadata costs more than a command's start
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as _installed_version

    try:
        return _installed_version("the-loop")
    except PackageNotFoundError:
        return __version__
