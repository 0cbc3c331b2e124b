"""Which tmux server a socket name and TMUX_TMPDIR name, and which state root a harness pane belongs to:
two daemons' spellings compared by what they mean, never by their letters."""

from __future__ import annotations

import hashlib
import os

_TMP = "/tmp/"  # tmux's _PATH_TMP


def socket_path(socket: str, tmux_tmpdir: str) -> str:
    """The socket of the server `tmux [-L socket]` reaches under `TMUX_TMPDIR=tmux_tmpdir` ("" for
    unset), by tmux's own rule: the first of TMUX_TMPDIR and /tmp that resolves, `tmux-<uid>` in it, the
    label (`default` when none is given); resolved again, so a linked folder is the folder it names."""
    for folder in (tmux_tmpdir, _TMP):
        try:
            resolved = os.path.realpath(folder, strict=True) if folder else None
        except OSError:
            resolved = None  # tmux skips a TMUX_TMPDIR that does not resolve
        if resolved is not None:
            break
    else:
        resolved = _TMP
    return os.path.realpath(os.path.join(resolved, f"tmux-{os.getuid()}", socket or "default"))


def root_mark(state_root: str) -> str:
    """The mark of the state root whose daemon started a harness pane (a short digest of its resolved
    path): a watchdog ends only its own root's agents on a server that several roots share."""
    return hashlib.sha256(os.path.realpath(state_root).encode()).hexdigest()[:16]
