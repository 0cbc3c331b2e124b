"""The sandbox: `SandboxTracker` implements `TrackerPort` over a local SQLite file, for the demo
and for trying the-loop without a GitHub account."""
