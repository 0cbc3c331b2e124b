"""Claude Code: its hooks handed by `--settings` (`hooks`, its receipt channel), and its user
configuration: `ClaudeTrust` implements `TrustPort` (trusted folders in `~/.claude.json`, so a new
folder does not open on the trust dialog)."""
