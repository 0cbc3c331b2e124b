"""What every agent's adapter shares: where each agent keeps its configuration, the trusted-folders
writer, the receipt line its hooks run, and the versions the-loop is pinned against."""
