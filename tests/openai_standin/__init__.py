"""A small local stand-in for the OpenAI Responses API, so the real Codex runs offline."""
