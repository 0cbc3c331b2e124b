"""`webhook`: `poll` that insists on serving GitHub's signed webhooks (webhooks.ghWebhook)."""

from __future__ import annotations

import argparse

from app.cli.context import CliContext, Commands, UsageProblem, command

__all__ = ["add_webhook"]


def add_webhook(commands: Commands) -> None:
    command(
        commands,
        "webhook",
        help_text="`poll`, refusing to start unless it serves GitHub webhooks (webhooks.ghWebhook)",
        description="The same daemon as `poll`, which serves GitHub's signed webhook deliveries on\n"
        "webhooks.ghWebhook.host:port whenever webhooks.ghWebhook.enabled is true; this command only\n"
        "refuses to start when it is not. A delivery announcing a new comment that can become a prompt\n"
        "(watched repository, authorized author, item listed or just labelled) wakes the poller; the\n"
        "comment then goes through the same ledger as a polled one, under the same delivery id, so it\n"
        "is delivered once whichever way it arrives. Any other is answered 202 and dropped\n"
        "(webhook.dropped). Unsigned or badly signed deliveries are refused (401, webhook.refused).\n"
        "SIGTERM or SIGINT stops cleanly.\n\n"
        "exit status: 0 stopped cleanly, 1 another poller holds the state root, 2 usage or\n"
        "configuration error (webhooks.ghWebhook.enabled is false, webhooks.ghWebhook.port in use).",
        handler=run_webhook,
    )


def run_webhook(args: argparse.Namespace, context: CliContext) -> int:
    from app.cli.operate import run_poll

    if not context.settings.webhooks.gh_webhook.enabled:
        raise UsageProblem("webhook: webhooks.ghWebhook.enabled is false (set it, with a secret, to serve webhooks)")
    args.once = False
    return run_poll(args, context)
