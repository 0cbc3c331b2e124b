"""SQLite: `SqliteStateStore` implements `StateStore` (ledgers, sessions, cursors) in one WAL file;
`SingleHost` implements `ClusterPort` for the host alone (its slots, in memory)."""
