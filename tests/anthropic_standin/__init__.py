"""A local stand-in for the Anthropic Messages API: Claude Code runs whole turns against it offline."""
