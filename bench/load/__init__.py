"""The load campaign of issue 11: `python -m bench.load`."""
