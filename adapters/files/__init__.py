"""How the-loop writes its own files: whole (write, flush, rename) and private (0600 files, 0700 folders)."""
