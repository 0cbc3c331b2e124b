"""App mode's soak at the daemon level: installation tokens living a few seconds, `poll` daemons acting
as the GitHub App — one host on SQLite, two hosts sharing one PostgreSQL — and comments on items of two
installations throughout; then what was delivered, what failed and how many tokens each host took.

    .venv/bin/python -m bench.app_tokens                          # tokens living 3 s, 10 expiries
    .venv/bin/python -m bench.app_tokens --expiries 3 --token-seconds 2 --json   # CI's form

Everything is real but GitHub: the daemons (`poll`, each its own process, state root, tmux server and
demo harness), gh, PostgreSQL (a private server, Debian's binaries). GitHub is the stand-in
(tests/github_standin) in App mode: it checks each JWT against the App's public key, hands out tokens
that live `--token-seconds` and answers 401 to any other. Each host's gh names the host in a header
(tests/github_standin/tagged_gh.sh), so the stand-in counts each host's tokens apart. A token is
replaced `--margin` seconds before it expires (`tokenRefreshMarginSeconds`).

The soak runs until the SQLite host and the cluster's reader have each replaced each installation's
token `--expiries` times, a comment posted every `--comment-seconds` on the next item meanwhile; then
until every comment is delivered. It counts, per host and installation, the tokens handed out, the
tokens that came to their end (within the margin of expiring) while the daemon ran, and those replaced
before (more than the margin left: a refresh no expiry called for); the requests answered 401 and
whether each was asked again and taken; the daemons' events that say a call failed; each comment's
deliveries in the event logs, its ledger and its reactions at the stand-in; and whether an issued
token's text is anywhere in the state files or the PostgreSQL database. Exit 1 when a count is off.
"""
