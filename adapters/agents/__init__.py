"""What every agent's adapter shares: where each agent keeps its configuration, the trusted-folders
writer, the receipt line its hooks run, the versions the-loop is pinned against, and `doctor`'s check
lines with the checks several agents' packages make alike."""
