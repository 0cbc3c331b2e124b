"""What a work item's worktree costs for a repository of 10,000 files: the first item of a
repository (clone + worktree) and later ones (fetch + worktree), each as a ratio against a fresh
full `git clone` of the same repository (file://, so the pack protocol runs) in the same run."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adapters.git.adapter import GitWorkspaces
from domain.refs import RepoRef, WorkItemRef
from domain.workspace import WorkspaceSpec

FILES = 10_000
ROUNDS = 5  # the machine is shared: medians, and every ratio from the same round's conditions
REPO = RepoRef.parse("bench/big")
IDENTITY = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x"}


def git(*args: str, cwd: Path | None = None) -> None:
    subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **IDENTITY}, check=True, capture_output=True)


def origin(root: Path) -> Path:
    """`root/bench/big.git`: one commit of FILES small files in 100 folders."""
    work = root / "work"
    for n in range(FILES):
        folder = work / f"dir{n % 100:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{n:05d}.txt").write_text(f"line {n}\n" * 20, encoding="utf-8")
    git("init", "--quiet", "--initial-branch=main", str(work))
    git("add", "--all", cwd=work)
    git("commit", "--quiet", "-m", "ten thousand files", cwd=work)
    bare = root / "bench" / "big.git"
    git("clone", "--quiet", "--bare", str(work), str(bare))
    return work


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def one_round(root: Path, work: Path, n: int) -> dict[str, float]:
    """Seconds of each step, all measured in this round's conditions."""
    port = GitWorkspaces(root=root / f"state{n}" / "clones", url_template=f"file://{root}/{{owner}}/{{repo}}.git")
    times = {"clone": timed(lambda: git("clone", "--quiet", f"file://{root}/bench/big.git", str(root / f"c{n}")))}
    for step in ("first", "later", "pushed"):
        if step == "pushed":
            (work / f"new{n}.txt").write_text("new\n", encoding="utf-8")
            git("add", "--all", cwd=work)
            git("commit", "--quiet", "-m", "one more", cwd=work)
            git("push", "--quiet", str(root / "bench" / "big.git"), "main", cwd=work)
        spec = WorkspaceSpec(WorkItemRef(REPO, len(times) + 10 * n), str(root / "agents" / f"{n}-{step}"))
        times[step] = timed(lambda spec=spec: port.create(spec))
        checked_out = sum(1 for _ in Path(spec.path).rglob("file*.txt"))
        assert checked_out == FILES, f"the worktree holds {checked_out} files, not {FILES}"
    return times


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="workspace-bench-"))
    try:
        work = origin(root)
        rounds = [one_round(root, work, n) for n in range(ROUNDS)]
        print(f"repository: {FILES} files; {ROUNDS} rounds; baseline: a fresh full `git clone` (file://) each round")
        for step, label in (
            ("clone", "git clone (baseline)"),
            ("first", "first item: clone + worktree"),
            ("later", "later item: fetch + worktree"),
            ("pushed", "later item, one new commit upstream"),
        ):
            median = statistics.median(r[step] for r in rounds)
            ratio = statistics.median(r[step] / r["clone"] for r in rounds)
            print(f"{label:<38} median {median * 1000:7.0f} ms   ratio to the same round's clone {ratio:5.2f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
