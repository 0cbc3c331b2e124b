"""Who may see the page and who may act on it: the token, as a Bearer header or the login form's
HttpOnly cookie; actions only with a token, and from a browser only with the CSRF field."""

from __future__ import annotations

import enum
import hashlib
import hmac

from app.web.http import Request

COOKIE = "loop_ui"


class Caller(enum.Enum):
    REFUSED = "refused"
    OPEN = "open"  # no token configured: loopback only, nothing to act with
    SCRIPT = "script"  # the Bearer header
    BROWSER = "browser"  # the login cookie


class Refusal(enum.Enum):
    """Why an action was not done, and what the person pressing the button can do about it."""

    NO_TOKEN = ("actions need ui.token", "set ui.token in the configuration: without it the page only shows")
    NOT_SIGNED_IN = ("no valid token", "sign in again, then press the button again")
    STALE_FORM = (
        "missing or wrong CSRF field",
        "the page was older than the daemon's token: reload the item's page and press the button again",
    )
    OTHER_ORIGIN = (
        "a request from another origin",
        "press the button on the page at its own address (the one the daemon printed, or a name of "
        "ui.allowedHosts); a browser extension or proxy that drops or rewrites the Origin header is refused too",
    )

    def __init__(self, said: str, remedy: str) -> None:
        self.said, self.remedy = said, remedy


class Guard:
    def __init__(self, token: str) -> None:
        self._token = token.encode()

    @property
    def guarded(self) -> bool:
        return bool(self._token)

    def _derived(self, purpose: str) -> str:
        # the cookie and the CSRF field are derived from the token, never the token itself
        return hmac.new(self._token, purpose.encode(), hashlib.sha256).hexdigest()

    @property
    def cookie_value(self) -> str:
        return self._derived("session")

    @property
    def csrf(self) -> str:
        return self._derived("csrf") if self._token else ""

    def token_ok(self, given: str) -> bool:
        return bool(self._token) and hmac.compare_digest(given.encode(), self._token)

    def caller(self, request: Request) -> Caller:
        if not self._token:
            return Caller.OPEN
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and self.token_ok(given.strip()):
            return Caller.SCRIPT
        if hmac.compare_digest(request.cookie(COOKIE).encode(), self.cookie_value.encode()):
            return Caller.BROWSER
        return Caller.REFUSED

    def may_act(self, request: Request, form: dict[str, str]) -> Refusal | None:
        """None when the action may go ahead, else why not."""
        caller = self.caller(request)
        if caller is Caller.OPEN:
            return Refusal.NO_TOKEN
        if caller is Caller.REFUSED:
            return Refusal.NOT_SIGNED_IN
        if caller is Caller.BROWSER:
            if not hmac.compare_digest(form.get("csrf", "").encode(), self.csrf.encode()):
                return Refusal.STALE_FORM
            # `Origin: null` (an opaque origin: a sandboxed frame, a `no-referrer` page's form) is another one
            origin = request.headers.get("origin", "")
            if origin and origin.split("://", 1)[-1] != request.headers.get("host", ""):
                return Refusal.OTHER_ORIGIN
        return None
