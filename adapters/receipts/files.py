"""`FileReceipts`: the receipt folders of every spawn, under `<state.root>/receipts/<slug>/<spawn>/`.

A harness writing its own receipt files is prepared here; every harness's hooks channel (Claude Code's
settings, Codex's hooks, Gemini CLI's extension, opencode's plugin) lives in its own adapter, and the
container names it for its mode (`channels`): the receipt folders import no harness's adapter."""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Mapping
from pathlib import Path

from adapters.agents.receipt_line import DECISION, EXPIRED, FOLDER_VARIABLE, TAKEN
from adapters.files.atomic import write_whole
from adapters.files.private import private_dir
from adapters.receipts.reading import parse, receipt_names, spawn_folder
from domain.asks import AnswerState
from domain.model import ReceiptChannel
from domain.ports import ReceiptPort
from domain.receipts import Receipt, ReceiptMode
from domain.refs import Naming, WorkItemRef

ENV_VARIABLE = FOLDER_VARIABLE  # where a harness that writes its own receipts puts them
# a harness's own channel: given the spawn's receipt folder (made, private), what its harness is handed
Channel = Callable[[Path], ReceiptChannel]


class FileReceipts(ReceiptPort):
    """Each file is parsed once per process; a folder is listed on every read (a few entries)."""

    def __init__(self, root: Path, *, channels: Mapping[str, Channel] | None = None) -> None:
        self._root = root
        self._channels = dict(channels or {})  # each harness package's hooks channel, by its name
        self._lock = threading.Lock()
        self._parsed: dict[Path, Receipt | None] = {}

    def folder(self, item: WorkItemRef, spawn: str) -> Path:
        return self._root / item.slug / spawn

    def prepare(self, item: WorkItemRef, spawn: str, *, mode: ReceiptMode, hooks: str = "") -> ReceiptChannel:
        folder = self.folder(item, spawn)
        private_dir(folder)
        if mode is ReceiptMode.FILE:
            return ReceiptChannel(env=((ENV_VARIABLE, str(folder)),))
        if mode is ReceiptMode.NONE:
            return ReceiptChannel()
        channel = self._channels.get(hooks)
        if channel is None:
            raise LookupError(f"no receipt channel for the hooks of {hooks!r}: the container names each package's")
        return channel(folder)

    def read(self, item: WorkItemRef, spawn: str) -> list[Receipt]:
        return self._read(spawn_folder(self._root, item, spawn))

    def find(self, item: WorkItemRef, line: str) -> bool:
        folders = []
        # the old slug's folders too (spawns made before the upgrade), unless another item's are there
        slugs = (item.slug, item.slug_by(Naming.LEGACY)) if item.owns_legacy_slug else (item.slug,)
        for slug in dict.fromkeys(slugs):
            try:
                folders += [entry for entry in (self._root / slug).iterdir() if entry.is_dir()]
            except OSError:
                continue
        return any(line in r.prompt for folder in folders for r in self._read(folder))

    def forget(self, item: WorkItemRef, *, keep: Collection[str] = ()) -> None:
        # never under the old slug: another item's folders may bear that name now
        spawns = self._root / item.slug
        try:
            folders = [entry for entry in spawns.iterdir() if entry.is_dir() and entry.name not in keep]
        except OSError:
            return
        import shutil  # only a forget removes: a listing starts without it

        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
            with self._lock:
                self._parsed = {p: r for p, r in self._parsed.items() if p.parent != folder}

    def give(self, item: WorkItemRef, spawn: str, key: str, output: str) -> None:
        _write_whole(self._beside(item, spawn, key, DECISION), output)

    def answer_state(self, item: WorkItemRef, spawn: str, key: str) -> AnswerState:
        # taken first: a hook that took the answer never expires
        for suffix, state in (
            (TAKEN, AnswerState.TAKEN),
            (EXPIRED, AnswerState.EXPIRED),
            (DECISION, AnswerState.GIVEN),
        ):
            if self._beside(item, spawn, key, suffix).exists():
                return state
        return AnswerState.NONE

    def withdraw(self, item: WorkItemRef, spawn: str, key: str) -> bool:
        try:
            self._beside(item, spawn, key, DECISION).unlink()
        except OSError:
            return False
        return True

    def _beside(self, item: WorkItemRef, spawn: str, key: str, suffix: str) -> Path:
        """A file next to receipt `key`; `key` is a receipt file's own name, never a comment's text."""
        if "/" in key or key.startswith("."):
            raise ValueError(f"not a receipt key: {key!r}")
        return spawn_folder(self._root, item, spawn) / f"{key}{suffix}"

    def _read(self, folder: Path) -> list[Receipt]:
        receipts = []
        for name in receipt_names(folder):
            path = folder / name
            with self._lock:
                known = path in self._parsed
                receipt = self._parsed.get(path)
            if not known:
                receipt = parse(path, name)
                with self._lock:
                    self._parsed[path] = receipt
            if receipt is not None:
                receipts.append(receipt)
        return receipts


def _write_whole(path: Path, text: str) -> None:
    write_whole(path, text, mode=0o666, fsync=False)  # its temporary name is never a receipt's: `read` skips it
