"""What `git status` does not show in a worktree: edits to files marked skip-worktree or
assume-unchanged, and ignored files (some worth keeping)."""

from __future__ import annotations

import tempfile
from fnmatch import fnmatchcase
from pathlib import Path

from adapters.git.runner import GitRunner


def hidden_edits(git: GitRunner, here: Path, *, where: str) -> bool:
    """An edit to a file marked skip-worktree (`S`) or assume-unchanged (lower case), which
    `git status` does not look at. The marks are taken off in a throwaway copy of the worktree's
    index, never in its own, and git compares those files there. A skip-worktree file left out of
    the folder (a sparse checkout) loses nothing: a deletion does not count."""
    listed = git("ls-files", "-v", "-z", cwd=here, where=where).split("\0")
    hidden = {entry[2:] for entry in listed if len(entry) > 2 and (entry[0].islower() or entry[0] == "S")}
    if not hidden:
        return False
    index = Path(git("rev-parse", "--path-format=absolute", "--git-path", "index", cwd=here, where=where).strip())
    # beside the index: a split index finds its shared part there
    with tempfile.NamedTemporaryFile(dir=index.parent, prefix="the-loop-index-") as copy:
        copy.write(index.read_bytes())
        copy.flush()
        throwaway = git.with_env(GIT_INDEX_FILE=copy.name)
        paths = "\0".join(sorted(hidden)) + "\0"
        for flag in ("--no-skip-worktree", "--no-assume-unchanged"):  # with --stdin, git applies only the last flag
            throwaway("update-index", flag, "-z", "--stdin", cwd=here, where=where, stdin=paths)
        changes = throwaway(
            "--no-pager", "diff", "--no-ext-diff", "--no-textconv", "--no-color", "--name-status", "-z",
            cwd=here, where=where,
        )  # fmt: skip
    fields = changes.split("\0")
    return any(kind != "D" and path in hidden for kind, path in zip(fields[::2], fields[1::2], strict=False))


def ignored_entries(git: GitRunner, here: Path, *, where: str) -> list[str]:
    """Ignored files, and folders holding only ignored files (`node_modules/`), as git lists them."""
    out = git("ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory", cwd=here, where=where)
    return [path for path in out.split("\0") if path]


def worth_keeping(entries: list[str], patterns: tuple[str, ...]) -> list[str]:
    """The entries a pattern names: a pattern without a slash matches a name at any depth, one with a
    slash the path from the top, one ending in a slash only folders (gitignore's simple cases). A
    folder git ignores as a whole is not looked into: what an install writes there is not kept."""
    return [entry for entry in entries if any(_matches(entry, pattern) for pattern in patterns)]


def _matches(entry: str, pattern: str) -> bool:
    folder, path = entry.endswith("/"), entry.rstrip("/")
    if pattern.endswith("/") and not folder:
        return False
    bare = pattern.strip("/")
    return fnmatchcase(path if "/" in bare else path.rsplit("/", 1)[-1], bare)
