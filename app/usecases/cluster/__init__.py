"""The hosts doing the work: every host's slots and the waits for one; and, where several share it,
leases, the heartbeat, orphans, moves and the hosts' view."""
