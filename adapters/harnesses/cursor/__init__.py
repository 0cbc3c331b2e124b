"""Cursor's CLI (`cursor-agent`): closed source, no hooks; a delivery counts once it is still alive."""
