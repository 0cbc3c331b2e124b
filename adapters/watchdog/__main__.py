"""`python -m adapters.watchdog`: see `adapters.watchdog.watch`."""

from adapters.watchdog.watch import main

raise SystemExit(main())
