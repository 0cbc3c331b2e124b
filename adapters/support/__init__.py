"""Helpers several adapters share; no port is implemented here."""
