"""The event log: `JsonlEventLog` implements `EventSink` (append-only JSON lines); the reader
filters and follows it for the CLI."""
