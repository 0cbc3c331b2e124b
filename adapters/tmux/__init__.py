"""tmux: `ShTmux` implements `TmuxPort` on the real binary through one timed-out runner;
`ShTmuxScreen` reads what a pane shows."""
