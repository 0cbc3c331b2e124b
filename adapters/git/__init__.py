"""git: `GitWorkspaces` implements `WorkspacePort` on the real binary — one shared clone per
repository, one worktree per work item — through one timed-out runner."""
