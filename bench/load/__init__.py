"""The load campaign: `python -m bench.load`."""
