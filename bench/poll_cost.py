"""Requests per poll cycle: GhTracker (real gh) against re-reading every thread, on the stand-in.

    .venv/bin/python -m bench.poll_cost --repos 2 --items 1000

Both pollers talk to the same stand-in in the same run; the stand-in counts what it serves. The
re-reader lists the labelled items (every page), the review comments, then each item's thread;
it uses plain HTTPS rather than gh only to finish in seconds: the count is the same either way.
A review comment also shows what it costs after it: the review stream is read until its pull
request's update is a minute old (the settling margin), then the cycle is idle again. `poll --once`
from cron is a new process each run: without a state folder it lists every labelled item again
(what every run cost before the listing state was kept), with one it costs what the daemon costs.
"""

from __future__ import annotations

import argparse
import json
import ssl
import tempfile
import time
import urllib.request
from pathlib import Path

from adapters.github import GhTracker
from domain.refs import RepoRef
from tests.github_standin import StandIn, World

LABEL = "loop"
Row = tuple[int, int, float]  # requests served, how many were 304, seconds


class Incremental:
    def __init__(self, standin: StandIn, repos: list[RepoRef]) -> None:
        self.tracker = GhTracker(host=standin.host, env=standin.gh_env(), timeout=60)
        self.repos = repos
        self.cursors: dict[RepoRef, str | None] = dict.fromkeys(repos)

    def cycle(self) -> int:
        found = 0
        for repo in self.repos:
            self.tracker.work_items(repo, LABEL)
            batch = self.tracker.new_comments(repo, self.cursors[repo])
            self.cursors[repo] = batch.cursor
            found += len(batch.comments)
        return found


class Cron:
    """`poll --once` from cron: a new tracker (a new process) each run; the cursors are the store's."""

    def __init__(self, standin: StandIn, repos: list[RepoRef], state_dir: Path | None) -> None:
        self.standin, self.repos, self.state_dir = standin, repos, state_dir
        self.cursors: dict[RepoRef, str | None] = dict.fromkeys(repos)

    def cycle(self) -> int:
        tracker = GhTracker(host=self.standin.host, env=self.standin.gh_env(), timeout=60, state_dir=self.state_dir)
        found = 0
        for repo in self.repos:
            tracker.work_items(repo, LABEL)
            batch = tracker.new_comments(repo, self.cursors[repo])
            self.cursors[repo] = batch.cursor
            found += len(batch.comments)
        return found


class ReReader:
    """The naive poller: every labelled item's thread, every cycle (2 per repo + 1 per item)."""

    def __init__(self, standin: StandIn, repos: list[RepoRef]) -> None:
        self.base = f"https://{standin.host}/api/v3"
        self.token = standin.world.token
        self.context = ssl.create_default_context(cafile=str(standin.cert))
        self.repos = repos

    def get(self, path: str) -> tuple[list[dict[str, object]], str]:
        request = urllib.request.Request(f"{self.base}/{path}", headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, context=self.context) as reply:
            link = reply.headers.get("Link", "")
            return json.loads(reply.read()), link

    def cycle(self) -> int:
        comments = 0
        for repo in self.repos:
            numbers, page = [], 1
            listing = f"repos/{repo.full_name}/issues?labels={LABEL}&state=open&per_page=100"
            while True:
                items, link = self.get(f"{listing}&page={page}")
                numbers += [int(str(item["number"])) for item in items]
                if 'rel="next"' not in link:
                    break
                page += 1
            comments += len(self.get(f"repos/{repo.full_name}/pulls/comments?per_page=100")[0])
            for number in numbers:
                comments += len(self.get(f"repos/{repo.full_name}/issues/{number}/comments?per_page=100")[0])
        return comments


def measure(world: World, poller: Incremental | ReReader | Cron) -> tuple[int, int, float]:
    world.reset_counters()
    started = time.perf_counter()
    poller.cycle()
    elapsed = time.perf_counter() - started
    world.tick()
    return world.requests, world.not_modified, elapsed


def review_rows(world: World, poller: Incremental, repo: RepoRef) -> list[tuple[str, tuple[int, int, float]]]:
    world.add_comment(repo.full_name, 10, "one review comment", review=True, path="a.py", line=1)
    rows = [("incremental, one new review comment", measure(world, poller))]
    world.tick(59)
    rows.append(("incremental, a minute later (review settles)", measure(world, poller)))
    rows.append(("incremental, idle cycle after it", measure(world, poller)))
    return rows


def cron_rows(world: World, standin: StandIn, repos: list[RepoRef], folder: Path) -> list[tuple[str, Row]]:
    rows = []
    for name, state_dir in (("no state folder (before)", None), ("state folder kept (after)", folder)):
        cron = Cron(standin, repos, state_dir)
        measure(world, cron)  # the first run: listing, streams start
        measure(world, cron)  # the moved windows' first, unconditional read
        rows.append((f"poll --once from cron, idle, {name}", measure(world, cron)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", type=int, default=2)
    parser.add_argument("--items", type=int, default=1000, help="per repository, at least 10 (#10 is a pull request)")
    args = parser.parse_args()
    if args.items < 10 or args.repos < 1:
        parser.error("--items must be at least 10 (item #10 is the pull request) and --repos at least 1")
    with tempfile.TemporaryDirectory() as directory:
        standin = StandIn(Path(directory))
        try:
            report(standin, args.repos, args.items, Path(directory) / "github")
        finally:
            standin.close()


def report(standin: StandIn, repo_count: int, item_count: int, state_dir: Path) -> None:
    world = standin.world
    repos = [RepoRef.parse(f"acme/repo{r}", host=standin.host) for r in range(repo_count)]
    for repo in repos:
        for number in range(1, item_count + 1):
            world.add_issue(repo.full_name, number, pull_request=number % 10 == 0)
    world.tick(3600)  # the items are old news by the time polling starts
    incremental, naive = Incremental(standin, repos), ReReader(standin, repos)
    rows = [("incremental, first cycle (full listing)", measure(world, incremental))]
    rows.append(("incremental, second cycle (streams start)", measure(world, incremental)))
    idle = measure(world, incremental)
    world.add_comment(repos[0].full_name, 1, "one new comment")
    active = measure(world, incremental)
    rows += [("incremental, idle cycle", idle), ("incremental, one new comment", active)]
    rows += review_rows(world, incremental, repos[0])
    rows += cron_rows(world, standin, repos, state_dir)
    naive_idle = measure(world, naive)
    world.add_comment(repos[0].full_name, 1, "one more comment")
    naive_active = measure(world, naive)
    rows += [("re-read every thread, idle cycle", naive_idle), ("re-read every thread, one new comment", naive_active)]
    print(f"poll cost on the stand-in: {repo_count} repositories x {item_count} labelled items")
    print(f"{'':62}{'requests':>9}{'304s':>7}{'per repo':>10}{'seconds':>9}")
    for name, (served, not_modified, elapsed) in rows:
        print(f"{name:62}{served:>9}{not_modified:>7}{served / repo_count:>10.1f}{elapsed:>9.2f}")
    print(f"ratio re-read / incremental, idle cycle:       {naive_idle[0] / idle[0]:.0f}x")
    print(f"ratio re-read / incremental, one new comment:  {naive_active[0] / active[0]:.0f}x")
    before, after = (row for name, row in rows if name.startswith("poll --once from cron"))
    print(f"ratio cron before / after, idle run:           {before[0] / after[0]:.1f}x")


if __name__ == "__main__":
    main()
