"""The demo harness: the-loop's own stand-in agent (`app.demo.harness`), writing its own receipt files."""
