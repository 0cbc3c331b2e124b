"""FileReceipts across the upgrade to injective slugs: a spawn made before it
wrote its receipts under the old slug, and they are still read."""

from __future__ import annotations

import json
from pathlib import Path

from adapters.receipts.files import FileReceipts
from domain.receipts import ReceiptMode
from domain.refs import Naming, WorkItemRef

DOTTED = WorkItemRef.parse("github:acme/foo.js#1")


def _receipt(folder: Path, prompt: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    body = {"hook_event_name": "UserPromptSubmit", "session_id": "sid-1", "prompt": prompt}
    (folder / "1700000000000000000-1.receipt").write_text(json.dumps(body), encoding="utf-8")


def test_receipts_of_a_spawn_made_before_the_upgrade_are_still_read(tmp_path: Path) -> None:
    _receipt(tmp_path / DOTTED.slug_by(Naming.LEGACY) / "spawn-old", "the-loop:delivery-1")
    receipts = FileReceipts(tmp_path)

    assert [r.prompt for r in receipts.read(DOTTED, "spawn-old")] == ["the-loop:delivery-1"]
    assert receipts.find(DOTTED, "delivery-1")


def test_two_items_whose_old_slugs_coincide_have_their_own_receipt_folders(tmp_path: Path) -> None:
    receipts = FileReceipts(tmp_path)
    one, other = WorkItemRef.parse("github:a/b-c#1"), WorkItemRef.parse("github:a-b/c#1")
    receipts.prepare(one, "spawn-1", mode=ReceiptMode.FILE)
    receipts.prepare(other, "spawn-2", mode=ReceiptMode.FILE)
    _receipt(receipts.folder(one, "spawn-1"), "for one")

    receipts.forget(other)

    assert receipts.folder(one, "spawn-1") != receipts.folder(other, "spawn-1")
    assert [r.prompt for r in receipts.read(one, "spawn-1")] == ["for one"]
    assert not receipts.find(other, "for one")
