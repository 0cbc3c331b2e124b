"""Installation tokens kept until a margin before they expire, one refresh per installation at a time."""

from __future__ import annotations

import threading

import pytest

from adapters.github.app_tokens import InstallationTokens, Minted

LIFETIME = 3600.0
MARGIN = 300.0
THREADS = 8


class Clock:
    """A monotonic clock the test moves; it also counts its reads, so a test can wait until every
    thread has entered the cache (each call reads the clock first)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.reads = 0
        self.read = threading.Condition()

    def __call__(self) -> float:
        with self.read:
            self.reads += 1
            self.read.notify_all()
        return self.now

    def wait_reads(self, count: int) -> None:
        with self.read:
            self.read.wait_for(lambda: self.reads >= count, timeout=10)


class Mint:
    """GitHub's side: each call a new token, `LIFETIME` seconds to live; `hold` makes a call wait."""

    def __init__(
        self,
        hold: threading.Event | None = None,
        *,
        until_reads: tuple[Clock, int] | None = None,
        name: str = "token",
    ) -> None:
        self.calls, self.name = 0, name
        self.hold, self.until_reads = hold, until_reads
        self.lock = threading.Lock()
        self.started = threading.Event()

    def __call__(self) -> Minted:
        with self.lock:
            self.calls += 1
            number = self.calls
        self.started.set()
        if self.until_reads is not None:
            clock, count = self.until_reads
            clock.wait_reads(count)
        if self.hold is not None:
            self.hold.wait(timeout=10)
        return Minted(f"{self.name}-{number}", LIFETIME)


def test_a_token_is_kept_until_the_margin_before_it_expires() -> None:
    clock, mint = Clock(), Mint()
    tokens = InstallationTokens(margin=MARGIN, monotonic=clock)
    first = tokens.token(7, mint)
    clock.now = LIFETIME - MARGIN - 1
    kept = tokens.token(7, mint)
    clock.now = LIFETIME - MARGIN
    renewed = tokens.token(7, mint)
    assert (first, kept, renewed, mint.calls) == ("token-1", "token-1", "token-2", 2)


def test_each_installation_has_a_token_of_its_own() -> None:
    clock, mint = Clock(), Mint()
    tokens = InstallationTokens(margin=MARGIN, monotonic=clock)
    assert [tokens.token(7, mint), tokens.token(8, mint), tokens.token(7, mint)] == ["token-1", "token-2", "token-1"]


def test_the_lifetime_counts_from_when_the_token_was_received() -> None:
    clock = Clock()
    tokens = InstallationTokens(margin=MARGIN, monotonic=clock)
    clock.now = 1000.0
    tokens.token(7, Mint())
    clock.now = 1000.0 + LIFETIME - MARGIN - 1
    assert tokens.token(7, Mint()) == "token-1"


def test_threads_finding_no_token_wait_for_one_refresh() -> None:
    clock = Clock()
    mint = Mint(until_reads=(clock, THREADS))  # the first refresh lasts until every thread has asked
    tokens = InstallationTokens(margin=MARGIN, monotonic=clock)
    got = _at_once(lambda: tokens.token(7, mint))
    assert (mint.calls, set(got)) == (1, {"token-1"})


def test_threads_finding_the_token_expired_wait_for_one_refresh() -> None:
    clock = Clock()
    tokens = InstallationTokens(margin=MARGIN, monotonic=clock)
    tokens.token(7, Mint())
    clock.now = LIFETIME + 1
    mint = Mint(until_reads=(clock, clock.reads + THREADS), name="new")
    got = _at_once(lambda: tokens.token(7, mint))
    assert (mint.calls, set(got)) == (1, {"new-1"})


def test_inside_the_margin_one_thread_refreshes_while_the_others_go_on_with_the_old_token() -> None:
    clock = Clock()
    tokens = InstallationTokens(margin=MARGIN, monotonic=clock)
    tokens.token(7, Mint())
    clock.now = LIFETIME - MARGIN / 2
    hold = threading.Event()
    slow = Mint(hold, name="new")
    refreshing = threading.Thread(target=tokens.token, args=(7, slow))
    refreshing.start()
    slow.started.wait(timeout=10)
    meanwhile = tokens.token(7, Mint(name="other"))  # a broken cache waits here for the refresh (10 s)
    hold.set()
    refreshing.join()
    assert (meanwhile, tokens.token(7, Mint(name="other"))) == ("token-1", "new-1")
    assert slow.calls == 1


def test_a_refused_token_is_refreshed_once_for_every_thread_it_was_refused_to() -> None:
    clock = Clock()
    tokens = InstallationTokens(margin=MARGIN, monotonic=clock)
    stale = tokens.token(7, Mint())
    mint = Mint(until_reads=(clock, clock.reads + THREADS), name="new")
    got = _at_once(lambda: tokens.refreshed(7, stale, mint))
    assert (mint.calls, set(got)) == (1, {"new-1"})


def test_a_token_refused_after_it_was_already_replaced_is_not_refreshed_again() -> None:
    clock, mint = Clock(), Mint()
    tokens = InstallationTokens(margin=MARGIN, monotonic=clock)
    stale = tokens.token(7, mint)
    fresh = tokens.refreshed(7, stale, mint)
    again = tokens.refreshed(7, stale, mint)  # a call that had the old token came back refused later
    assert (stale, fresh, again, mint.calls) == ("token-1", "token-2", "token-2", 2)


def test_a_refused_token_is_replaced_even_long_before_it_would_expire() -> None:
    clock, mint = Clock(), Mint()
    tokens = InstallationTokens(margin=MARGIN, monotonic=clock)
    stale = tokens.token(7, mint)
    assert (tokens.refreshed(7, stale, mint), tokens.token(7, mint)) == ("token-2", "token-2")


def test_a_failed_refresh_keeps_nothing_and_the_next_call_tries_again() -> None:
    clock = Clock()
    tokens = InstallationTokens(margin=MARGIN, monotonic=clock)

    def failing() -> Minted:
        raise RuntimeError("GitHub did not answer")

    with pytest.raises(RuntimeError):
        tokens.token(7, failing)
    assert tokens.token(7, Mint()) == "token-1"


def test_a_token_never_shows_in_a_repr() -> None:
    assert "secret-value" not in repr(Minted("secret-value", 60.0))


def _at_once(call: object) -> list[str]:
    """`call` in `THREADS` threads released together; what each returned."""
    assert callable(call)
    start = threading.Barrier(THREADS)
    got: list[str] = []

    def run() -> None:
        start.wait()
        got.append(call())

    threads = [threading.Thread(target=run) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return got
