"""Each repository's `Listing` on disk: one JSON file, written whole and atomically."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from adapters.files.atomic import write_whole
from adapters.files.private import private_dir
from adapters.github.listing import LabelledSet, Listing
from adapters.github.payloads import format_time, parse_time
from adapters.sql.state_codec import item_fields, item_of
from domain.model import WorkItem
from domain.refs import RepoRef, WorkItemRef

log = logging.getLogger(__name__)

_VERSION = 1
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_NAME = re.compile(r"[A-Za-z0-9._-]+-[0-9a-f]{12}\.json|\.listing-.+\.tmp")  # a listing, or one cut short


class ListingFiles:
    """Where `GhTracker` keeps each repository's `Listing` between processes (None: nowhere).

    A file that cannot be read, is corrupt, of another version or of another repository is
    ignored with a warning, and the listing is redone; a write that fails is a warning too, and
    the next process redoes the listing. Neither is ever an error: the file only saves requests.
    """

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory

    def path(self, repo: RepoRef) -> Path | None:
        if self.directory is None:
            return None
        # readable, and unique: two names the slug folds together differ in the digest
        digest = hashlib.sha256(str(repo).encode()).hexdigest()[:12]
        return self.directory / f"{_UNSAFE.sub('-', str(repo))}-{digest}.json"

    def forget_except(self, watched: Iterable[RepoRef]) -> list[Path]:
        """Delete the listings of repositories not in `watched` (state stays bounded when
        repositories stop being watched); what it deleted. Other files are left alone."""
        if self.directory is None:
            return []
        kept = {path.name for repo in watched if (path := self.path(repo)) is not None}
        try:
            found = sorted(p for p in self.directory.iterdir() if _NAME.fullmatch(p.name) and p.name not in kept)
        except OSError:
            return []
        gone = []
        for path in found:
            with contextlib.suppress(OSError):
                path.unlink()
                gone.append(path)
        return gone

    def load(self, repo: RepoRef) -> Listing | None:
        path = self.path(repo)
        if path is None:
            return None
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as error:
            log.warning("%s: listing state %s unreadable, listing again: %s", repo, path, error)
            return None
        try:
            return _decode(json.loads(text), repo)
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            log.warning("%s: listing state %s ignored, listing again: %r", repo, path, error)
            return None

    def save(self, repo: RepoRef, listing: Listing) -> None:
        path = self.path(repo)
        if path is None:
            return
        text = json.dumps(_encode(listing, repo), sort_keys=True, separators=(",", ":"))
        try:
            private_dir(path.parent)
            write_whole(path, text, prefix=".listing-", suffix=".tmp")  # named so `_NAME` sweeps one cut short
        except OSError as error:
            log.warning("%s: listing state %s not written (the next process lists again): %s", repo, path, error)


def _encode(listing: Listing, repo: RepoRef) -> dict[str, Any]:
    until = listing.review_until
    return {
        "v": _VERSION,
        "repo": f"{repo.host}/{repo.full_name}",
        "review_until": None if until is None else format_time(until),
        "labels": {label: _encode_set(state) for label, state in listing.sets.items()},
    }


def _decode(doc: dict[str, Any], repo: RepoRef) -> Listing:
    if doc["v"] != _VERSION:
        raise ValueError(f"version {doc['v']!r}, not {_VERSION}")
    if doc["repo"] != f"{repo.host}/{repo.full_name}":
        raise ValueError(f"the state of {doc['repo']!r}")
    until = doc["review_until"]
    sets = {str(label): _decode_set(str(label), raw, repo) for label, raw in doc["labels"].items()}
    return Listing(sets, None if until is None else parse_time(str(until)))


def _encode_set(state: LabelledSet) -> dict[str, Any]:
    return {
        "since": state.since,
        "etag": state.etag,
        "versions": {str(n): v for n, v in state.versions.items()},
        "items": [_encode_item(item) for _, item in sorted(state.items.items())],
    }


def _decode_set(label: str, raw: dict[str, Any], repo: RepoRef) -> LabelledSet:
    items = [_decode_item(entry, repo) for entry in raw["items"]]
    return LabelledSet(
        label,
        format_time(parse_time(str(raw["since"]))),
        {item.ref.number: item for item in items},
        {int(n): format_time(parse_time(str(v))) for n, v in raw["versions"].items()},
        str(raw["etag"]),
    )


def _encode_item(item: WorkItem) -> dict[str, Any]:
    created = item.created_at
    return {
        "number": item.ref.number,
        **item_fields(item),
        "created_at": None if created is None else format_time(created),
    }


def _decode_item(raw: dict[str, Any], repo: RepoRef) -> WorkItem:
    created = raw["created_at"]
    return item_of(raw, WorkItemRef(repo, int(raw["number"])), None if created is None else parse_time(str(created)))
