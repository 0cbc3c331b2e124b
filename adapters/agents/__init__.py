"""What every agent's adapter shares: where each agent keeps its configuration, the trusted-folders
writer, and the receipt line its hooks run."""
