"""PostgreSQL: `PostgresStateStore` implements `StateStore` (ledgers, sessions, cursors) in one
database several hosts can share."""
