"""A short soak of App mode: installation tokens living five seconds, several threads calling on two
installations through about five expiries each. No call fails, and no token is replaced while it has
more than the margin left: one refresh per expiry per installation, counted at the stand-in."""

from __future__ import annotations

import threading

import pytest

from domain.errors import TrackerError
from domain.refs import RepoRef, WorkItemRef
from tests.github_standin import StandIn
from tests.github_standin.app_rig import AppKeyFile, app_key, app_mode, app_tracker
from tests.github_standin.rigs import LABEL, standin

__all__ = ["app_key", "standin"]  # fixtures, imported to be used here

pytestmark = pytest.mark.gh
# a call that set out with a token's last moment is refused and asked again with a fresh one: that
# one must reach the stand-in within its life, though gh may take seconds to start on a loaded machine
TOKEN_SECONDS = 5
MARGIN = 2.0
EXPIRIES = 5
THREADS = 3
INSTALLATIONS = {7: "acme/widgets", 8: "umbrella/gears"}


def test_tokens_expiring_every_few_seconds_cost_one_refresh_each_and_fail_no_call(
    standin: StandIn, app_key: AppKeyFile
) -> None:
    app = app_mode(standin, app_key, token_seconds=TOKEN_SECONDS)
    items = []
    for number, name in INSTALLATIONS.items():
        app.install(number, name.split("/")[0])
        standin.world.add_issue(name, 1)
        items.append(WorkItemRef(RepoRef.parse(name, host=standin.host), 1))
    gh = app_tracker(standin, app_key, margin=MARGIN)
    done = threading.Event()
    failures: list[str] = []
    calls = [0] * THREADS

    def call(worker: int) -> None:
        while not done.is_set():
            item = items[(worker + calls[worker]) % len(items)]
            try:
                gh.item_state(item, LABEL)
            except TrackerError as error:
                failures.append(str(error))
            calls[worker] += 1

    workers = [threading.Thread(target=call, args=(n,)) for n in range(THREADS)]
    for worker in workers:
        worker.start()
    # the first token and one per expiry, for each installation
    reached = app.wait_for(lambda: all(len(app.exchanges_of(n)) > EXPIRIES for n in INSTALLATIONS), timeout=240)
    done.set()
    for worker in workers:
        worker.join()

    exchanges = {n: app.exchanges_of(n) for n in INSTALLATIONS}
    print(f"soak: {sum(calls)} calls, {len(failures)} failed, {app.refused} answered 401, exchanges "
          + ", ".join(f"{n}: {len(e)}" for n, e in exchanges.items()))  # fmt: skip
    assert reached and failures == []
    for replaced in exchanges.values():
        left = [e.previous_left for e in replaced[1:]]
        assert all(seconds is not None and seconds <= MARGIN for seconds in left), left
