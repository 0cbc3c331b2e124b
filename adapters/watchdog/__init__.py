"""The agent watchdog: `ProcessWatchdog` implements `AgentWatchdogPort` — the daemon records its
agents' deadline in a file, and a process of its own (`python -m adapters.watchdog`, in a session of
its own) ends this host's agents once that deadline passes unrenewed."""
