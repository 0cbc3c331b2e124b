"""Use cases: the poll cycle, the item worker, the dispatcher, closing, the daemon, the webhook
intake and the sessions admin — run against the ports, never the CLI or the configuration file."""
