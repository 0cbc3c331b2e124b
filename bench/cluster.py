"""Several hosts on one machine: GitHub requests per cycle, deliveries per second and
lease take-over time with 1, 2 and 3 hosts, each ratio against one host measured in the same run.

    .venv/bin/python -m bench.cluster --items 6 --comments 10

Each host is a real `poll` daemon with its own state root, tmux server and host id; one private
PostgreSQL (Debian's binaries, as the tests start it); the GitHub stand-in behind the real gh; the
recording harness with receipts. Leases: 3 s, renew deadline 2 s, a cycle every second. The
machine's cores are shared by every host: deliveries per second show the overhead of sharing the
work, not what separate machines would add.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.e2e.cluster_rig import Cluster, event_time
from tests.github_standin import StandIn
from tests.postgres_support import PgCluster, start_cluster
from tests.tmux_support import wait_for

NAMES = ("host-a", "host-b", "host-c")


@contextmanager
def hosts(pg: PgCluster, standin: StandIn, root: Path, count: int, items: int) -> Iterator[Cluster]:
    """`count` hosts running, `items` labelled items with their sessions spawned."""
    cluster = Cluster(root, pg, standin)
    try:
        for name in NAMES[:count]:
            cluster.add(name)
        cluster.started()
        cluster.refs = cluster.issues(items)  # type: ignore[attr-defined]
        wait_for(lambda: sum(len(h.sessions()) for h in cluster.hosts.values()) == items, timeout=120, what="spawns")
        yield cluster
    finally:
        cluster.close()


def requests_per_cycle(cluster: Cluster, seconds: float) -> tuple[float, float]:
    """Stand-in requests per cycle of the host reading the repository, and per second, when idle."""
    time.sleep(3)  # past the spawns' reactions and first reads
    reader = next(h for h in cluster.hosts.values() if h.events("cluster.reading"))
    cluster.world.reset_counters()
    before = len(reader.events("poll.cycle"))
    time.sleep(seconds)
    cycles = len(reader.events("poll.cycle")) - before
    return cluster.world.requests / max(1, cycles), cluster.world.requests / seconds


def deliveries_per_second(cluster: Cluster, per_item: int) -> float:
    refs = cluster.refs  # type: ignore[attr-defined]
    started = time.perf_counter()
    ids = {cluster.comment(ref, f"bench {n} for #{ref.number}") for n in range(per_item) for ref in refs}
    wait_for(lambda: cluster.delivered(refs) >= ids, timeout=600, what="every comment delivered")
    return len(ids) / (time.perf_counter() - started)


def take_over(cluster: Cluster) -> tuple[float, float, float]:
    """Seconds from a host's SIGKILL (daemon and tmux server) to its last item leased elsewhere,
    to its last item's fresh session spawned elsewhere, and from its last renewal to the lease."""
    victim = cluster.hosts["host-b"]
    its = [ref for ref, host in cluster.holders().items() if host == "host-b"]
    killed_at = victim.kill()
    survivors = [h for h in cluster.hosts.values() if h is not victim]

    def spawned() -> list[float]:
        return [event_time(e) for h in survivors for e in h.events("session.respawned")
                if e["work_item"] in {str(r) for r in its}]  # fmt: skip

    wait_for(lambda: len(spawned()) >= len(its), timeout=60, what="the victim's items respawned")
    taken = [event_time(e) for h in survivors for e in h.events("cluster.lease_placed") if e["how"] == "taken-over"]
    rows = cluster.query("SELECT extract(epoch FROM heartbeat_at)::float8 FROM hosts WHERE host = 'host-b'")
    return max(taken) - killed_at, max(spawned()) - killed_at, max(taken) - float(rows[0][0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=6, help="labelled items (sessions) in every run")
    parser.add_argument("--comments", type=int, default=10, help="comments posted to each item at once")
    parser.add_argument("--idle-seconds", type=float, default=8.0, help="window the idle requests are counted in")
    args = parser.parse_args()
    pg = start_cluster()
    with tempfile.TemporaryDirectory() as directory:
        (Path(directory) / "standin").mkdir()
        standin = StandIn(Path(directory) / "standin")
        try:
            report(pg, standin, Path(directory), args)
        finally:
            standin.close()
            pg.stop()


def report(pg: PgCluster, standin: StandIn, root: Path, args: argparse.Namespace) -> None:
    rows: dict[int, tuple[float, float, float]] = {}
    for count in (1, 2, 3):
        with hosts(pg, standin, root / f"run-{count}", count, args.items) as cluster:
            per_cycle, per_second = requests_per_cycle(cluster, args.idle_seconds)
            rows[count] = (per_cycle, per_second, deliveries_per_second(cluster, args.comments))
            if count == 3:
                relet, respawned, after_renewal = take_over(cluster)
    print(f"cluster on one machine: {args.items} items, {args.comments} comments each at once; lease 3 s, deadline 2 s")
    print(f"{'hosts':>5}{'GitHub req/cycle':>18}{'req/s idle':>12}{'deliveries/s':>14}{'ratio to 1 host':>17}")
    for count, (per_cycle, per_second, delivered) in rows.items():
        print(f"{count:>5}{per_cycle:>18.2f}{per_second:>12.2f}{delivered:>14.2f}{delivered / rows[1][2]:>17.2f}")
    print(f"GitHub requests per cycle, 3 hosts / 1 host: {rows[3][0] / rows[1][0]:.2f}")
    print(f"take-over after SIGKILL (3 hosts): leased elsewhere {relet:.2f}s, respawned {respawned:.2f}s; "
          f"{after_renewal:.2f}s after the lost host's last renewal (lease 3 s)")  # fmt: skip


if __name__ == "__main__":
    main()
