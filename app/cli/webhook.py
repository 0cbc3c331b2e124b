"""`webhook`: the poller, plus a receiver of GitHub's signed webhooks that wakes it at once."""

from __future__ import annotations

import argparse
import sys

from app.cli.context import CliContext, Commands, UsageProblem, command
from app.cli.operate import PollerBlocked

__all__ = ["add_webhook"]


def add_webhook(commands: Commands) -> None:
    command(
        commands,
        "webhook",
        help_text="poll, and serve GitHub webhooks (webhooks.ghWebhook) so comments arrive at once",
        description="Run the poller in the foreground and serve GitHub's signed webhook deliveries on\n"
        "webhooks.ghWebhook.host:port. A delivery announcing a new comment that can become a prompt\n"
        "(watched repository, authorized author, item listed or just labelled) wakes the poller; the\n"
        "comment then goes through the same ledger as a polled one, under the same delivery id, so it\n"
        "is delivered once whichever way it arrives. Any other is answered 202 and dropped\n"
        "(webhook.dropped). Unsigned or badly signed deliveries are refused (401). SIGTERM or SIGINT\n"
        "stops cleanly.\n\n"
        "exit status: 0 stopped cleanly, 1 another poller holds the state root or the port cannot be\n"
        "bound, 2 usage or configuration error (webhooks.ghWebhook.enabled is false).",
        handler=run_webhook,
    )


def run_webhook(args: argparse.Namespace, context: CliContext) -> int:
    from app.cli.ui import page_served
    from app.usecases.daemon import Blocked, install_signal_handlers  # the use cases load only when run

    if not context.settings.webhooks.gh_webhook.enabled:
        raise UsageProblem("webhook: webhooks.ghWebhook.enabled is false (set it, with a secret, to serve webhooks)")
    container = context.container
    clock = container.clock()

    def report(line: str) -> None:
        print(f"{clock.now():%H:%M:%S} {line}", file=sys.stderr, flush=True)

    daemon = container.daemon(report=report)
    install_signal_handlers(daemon)
    container.webhook_intake().notify = daemon.wake
    server = container.webhook_server()
    server.start()
    host, port = server.address
    report(f"serving GitHub webhooks on http://{host}:{port}/")
    try:
        with page_served(context, report):
            daemon.run()
    except Blocked as blocked:
        raise PollerBlocked(f"webhook: another poller is running: {blocked}") from None
    finally:
        server.stop()
    report("stopped")
    return 0
