"""`webhook`: `poll` that insists on serving GitHub's signed webhooks (webhooks.ghWebhook)."""

from __future__ import annotations

import argparse

from app.cli.context import CliContext, Commands, UsageProblem, command

__all__ = ["add_webhook"]


def add_webhook(commands: Commands) -> None:
    command(
        commands,
        "webhook",
        run_webhook,
        """
        `poll`, refusing to start unless it serves GitHub webhooks (webhooks.ghWebhook)

        The same daemon as `poll`, which serves GitHub's signed webhook deliveries on
        webhooks.ghWebhook.host:port whenever webhooks.ghWebhook.enabled is true; this command only
        refuses to start when it is not. A delivery announcing a new comment that can become a prompt
        (watched repository, authorized author, item listed or just labelled) wakes the poller; the
        comment then goes through the same ledger as a polled one, under the same delivery id, so it
        is delivered once whichever way it arrives. Any other is answered 202 and dropped
        (webhook.dropped). Unsigned or badly signed deliveries are refused (401, webhook.refused).
        SIGTERM or SIGINT stops cleanly.

        exit status: 0 stopped cleanly, 1 another poller holds the state root, 2 usage or
        configuration error (webhooks.ghWebhook.enabled is false, webhooks.ghWebhook.port in use).
        """,
    )


def run_webhook(args: argparse.Namespace, context: CliContext) -> int:
    from app.cli.operate import run_poll

    if not context.settings.webhooks.gh_webhook.enabled:
        raise UsageProblem("webhook: webhooks.ghWebhook.enabled is false (set it, with a secret, to serve webhooks)")
    args.once = False
    return run_poll(args, context)
