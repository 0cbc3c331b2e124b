"""`init --app`: the GitHub App's settings, its key checked as the start checks it, what to select for
it on GitHub, and a manifest to register it from (docs/github-app.md)."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.cli.context import UsageProblem
from app.cli.starter import AppStart, app_block
from domain.github_app import EVENTS, PERMISSIONS, Scope

DEFAULT_NAME = "the-loop"
Say = Callable[[str], None]


def add_app_options(parser: argparse.ArgumentParser) -> None:
    app = parser.add_argument_group("GitHub App (--app, docs/github-app.md)")
    app.add_argument(
        "--app",
        action="store_true",
        help="act as a GitHub App: write its id and key into the configuration (a new one, or add them to the "
        "one at --path), and say the permissions and events to select for it; or, with --manifest, write a "
        "manifest to register it from",
    )
    app.add_argument("--app-id", type=int, metavar="N", help="the App's ID (its settings page on GitHub)")
    app.add_argument("--private-key", metavar="FILE", help="the .pem GitHub generated for the App: mode 0600")
    app.add_argument("--manifest", metavar="FILE", help="write a GitHub App manifest there (JSON; never over a file)")
    app.add_argument("--app-name", metavar="NAME", help=f"the manifest's App name (default {DEFAULT_NAME})")
    app.add_argument("--homepage", metavar="URL", help="the manifest's homepage URL (GitHub requires one)")
    app.add_argument("--webhook-url", metavar="URL", help="the manifest's webhook URL (default: no webhook)")
    app.add_argument("--redirect-url", metavar="URL", help="the manifest's redirect URL: where GitHub sends the code")


def app_start(args: argparse.Namespace) -> AppStart | None:
    """The App's id and key from the flags, the key refused as the start refuses it; None without them."""
    given = [flag for flag, value in (("--app-id", args.app_id), ("--private-key", args.private_key)) if value]
    if not args.app:
        extra = given + [f for f, v in (("--manifest", args.manifest), ("--app-name", args.app_name)) if v]
        if extra:
            raise UsageProblem(f"init: {', '.join(extra)} go with --app")
        return None
    if not given:
        if args.manifest:
            return None
        raise UsageProblem(
            "init: --app needs --app-id N and --private-key FILE (the App's settings page), or --manifest FILE"
            " to register the App first"
        )
    if len(given) == 1:
        raise UsageProblem("init: --app-id and --private-key go together")
    if args.app_id < 1:
        raise UsageProblem(f"init: --app-id: {args.app_id} is not an App's ID")
    from adapters.github.app_key import AppKey, AppKeyError  # PyJWT and cryptography: only for --app

    key = Path(args.private_key).expanduser().absolute()
    try:
        AppKey.read(args.app_id, key)
    except AppKeyError as error:
        raise UsageProblem(f"init: --private-key: {error}") from None
    return AppStart(args.app_id, str(key))


def manifest(args: argparse.Namespace) -> dict[str, Any] | None:
    """The manifest GitHub registers the App from (its "registering a GitHub App from a manifest"):
    the permissions and events the-loop needs, private to its owner. None without --manifest."""
    if not args.manifest:
        extra = [f for f, v in (("--homepage", args.homepage), ("--webhook-url", args.webhook_url)) if v]
        if extra or args.redirect_url:
            raise UsageProblem(f"init: {', '.join(extra or ['--redirect-url'])} go with --manifest")
        return None
    if not args.homepage:
        raise UsageProblem("init: --manifest needs --homepage URL (GitHub requires the App's homepage; any page)")
    urls = {"--homepage": args.homepage, "--webhook-url": args.webhook_url, "--redirect-url": args.redirect_url}
    for flag, url in urls.items():
        if url and not url.startswith(("https://", "http://")):
            raise UsageProblem(f"init: {flag}: {url!r} is not an http(s) URL")
    # GitHub requires a hook URL; with no receiver the hook is off and the homepage stands in
    hook = {"url": args.webhook_url or args.homepage, "active": bool(args.webhook_url)}
    document: dict[str, Any] = {"name": args.app_name or DEFAULT_NAME, "url": args.homepage, "hook_attributes": hook}
    if args.redirect_url:
        document["redirect_url"] = args.redirect_url
    document["public"] = False
    document["default_permissions"] = {permission.key: permission.access.value for permission in PERMISSIONS}
    document["default_events"] = list(EVENTS)
    return document


def free(path: Path) -> None:
    if path.exists() or path.is_symlink():
        raise UsageProblem(f"init: {path} exists already; not overwritten")


def write_manifest(path: Path, document: dict[str, Any]) -> None:
    try:  # O_EXCL: a file made meanwhile is not overwritten either
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise UsageProblem(f"init: {path} exists already; not overwritten") from None
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(json.dumps(document, indent=2) + "\n")


def added(path: Path, app: AppStart) -> str:
    """The text of the configuration at `path` with the App's block added at its end; refused where
    the file has an `integrations` block already (a second one would silently replace it)."""
    import yaml  # the configuration's parser: only when `init` runs

    try:
        text = path.read_text(encoding="utf-8")
        document = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise UsageProblem(f"init: {path}: cannot read it to add the App: {error}") from None
    if not isinstance(document, dict):
        raise UsageProblem(f"init: {path}: not a configuration (a YAML mapping); the App is not added")
    integrations = document.get("integrations")
    if integrations is not None:
        github = integrations.get("github") if isinstance(integrations, dict) else None
        if isinstance(github, dict) and github.get("app") is not None:
            raise UsageProblem(f"init: {path} names a GitHub App already (integrations.github.app); not changed")
        block = app_block(app).split("\n", 3)[3]  # the lines under integrations.github
        raise UsageProblem(
            f"init: {path} has an integrations block already; not changed: add under its github:\n{block}"
        )
    return text + ("" if text.endswith("\n") or not text else "\n") + app_block(app)


def write_into(path: Path, text: str) -> None:
    """The configuration written whole (its mode kept): a reader sees it as it was, or with the App."""
    from adapters.files.atomic import write_whole

    target = path.resolve()  # a link's file is changed, not replaced by one
    write_whole(target, text, mode=os.stat(target).st_mode & 0o777)


def say_what_to_select(say: Say = print) -> None:
    """The permissions and events to select on the App's settings page, from the one table of them."""
    say("On GitHub, the App's settings page › Permissions & events:")
    for scope in Scope:
        say(f"  {scope.value}:")
        for permission in (p for p in PERMISSIONS if p.scope is scope):
            say(f"    {permission.shown} ({permission.purpose})")
    say(f"  Subscribe to events: {', '.join(EVENTS)}")
    say(
        "An installation's owner must accept every change of these later (GitHub asks them); "
        "`the-loop doctor` checks what each installation holds."
    )


def say_how_to_register(path: Path, say: Say = print) -> None:
    say(
        f"wrote {path}: post it as the field `manifest` of a form to https://github.com/organizations/ORG/"
        "settings/apps/new (your own account: https://github.com/settings/apps/new), then exchange the code "
        'GitHub hands back for the App\'s ID and key (docs/github-app.md, "From a manifest")'
    )
