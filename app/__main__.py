"""`python -m app`: the command line."""

from app.cli.main import main

raise SystemExit(main())
