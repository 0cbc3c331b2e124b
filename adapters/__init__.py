"""The outside world: one package per technology, each implementing ports of `domain.ports`."""
