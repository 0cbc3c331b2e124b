"""Several hosts sharing the work: leases, the heartbeat, orphans, moves, waits for a slot, and the hosts' view."""
