"""A pause point for fault tests only: with $LOOP_FAULT_STOP_AFTER_LEASE_CHECK naming an action
(`paste`, `spawn`), the daemon stops itself — SIGSTOP, every thread, as a GC or VM pause would — once,
right after the lease check of that action's first tmux call and before the call. Unset (always, in
production) it does nothing."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Mapping

ENV = "LOOP_FAULT_STOP_AFTER_LEASE_CHECK"


def stop_point(environ: Mapping[str, str] | None = None) -> Callable[[str], None]:
    wanted = (os.environ if environ is None else environ).get(ENV, "")
    fired = threading.Event()

    def point(action: str) -> None:
        if wanted and action == wanted and not fired.is_set():
            fired.set()
            os.kill(os.getpid(), signal.SIGSTOP)

    return point
