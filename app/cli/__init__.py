"""The command line: the parser and its global options (`main`), one module per command group
with its views; each command resolves what it needs from the container and calls a use case."""
