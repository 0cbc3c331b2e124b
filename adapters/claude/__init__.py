"""Claude Code's user configuration: `ClaudeTrust` implements `TrustPort` (trusted folders in
`~/.claude.json`, so a new folder does not open on the trust dialog)."""
