"""The state store's SQL core, once for both stores: the statements, the schema's shape, the checked
SQLite opener, the state codec and the light row reader."""
