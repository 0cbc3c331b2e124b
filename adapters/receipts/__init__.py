"""Receipts: `FileReceipts` implements `ReceiptPort` — one folder per spawn under the state root,
where a harness's hooks (Claude Code) or the harness itself write one file per receipt."""
