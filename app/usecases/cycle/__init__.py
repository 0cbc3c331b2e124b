"""The poll cycle and the daemon around it: reading each repository, intake, webhooks, each item's
lane, and what a cycle did."""
