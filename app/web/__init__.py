"""The fleet page: an entry point beside the CLI, served by the daemon (docs/ui.md)."""
