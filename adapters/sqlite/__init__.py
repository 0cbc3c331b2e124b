"""SQLite: `SqliteStateStore` implements `StateStore` (ledgers, sessions, cursors) in one WAL file."""
