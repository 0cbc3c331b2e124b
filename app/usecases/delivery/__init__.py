"""Delivery: one item's comments into its agent — the worker, the dispatcher, the spawn, the watch,
asks, parking, control and closing."""
