"""Reading what `gh api -i` prints: status, headers, body, next page, and what a status means."""

from __future__ import annotations

import pytest

from adapters.github.reply import check, next_path, parse_reply
from adapters.github.streams import CommentCursor
from domain.errors import RateLimited, TrackerError

# gh 2.23 prints the status line with a bare \n and every header line with \r\n
RAW = (
    b"HTTP/1.1 200 OK\n"
    b"Date: Wed, 01 Jan 2025 12:00:00 GMT\r\n"
    b'Etag: W/"abc"\r\n'
    b'Link: <https://ghe.local:8443/api/v3/repos/a/b/issues?page=2>; rel="next", <x>; rel="last"\r\n'
    b"\r\n"
    b'[{"body": "line\\n\\r\\nnext"}]'
)


def test_the_body_is_kept_byte_for_byte_after_the_headers() -> None:
    assert parse_reply(RAW, "a/b").body == b'[{"body": "line\\n\\r\\nnext"}]'


def test_headers_are_read_by_lower_case_name() -> None:
    reply = parse_reply(RAW, "a/b")
    assert (reply.status, reply.etag, reply.server_time) == (200, 'W/"abc"', 1735732800.0)


def test_a_304_has_a_status_and_no_body() -> None:
    reply = parse_reply(b'HTTP/1.1 304 Not Modified\nEtag: "x"\r\n\r\n', "a/b")
    assert (reply.status, reply.body) == (304, b"")


def test_an_etag_that_could_smuggle_an_argument_is_dropped() -> None:
    reply = parse_reply(b'HTTP/1.1 200 OK\nEtag: "x" -X DELETE\r\n\r\n[]', "a/b")
    assert reply.etag == ""


def test_the_next_link_becomes_a_path_under_the_enterprise_prefix() -> None:
    assert next_path(parse_reply(RAW, "a/b"), "ghe.local:8443", "a/b") == "repos/a/b/issues?page=2"


def test_a_next_link_to_another_host_is_refused() -> None:
    with pytest.raises(TrackerError, match=r"a/b: pagination link leaves ghe\.local:9999"):
        next_path(parse_reply(RAW, "a/b"), "ghe.local:9999", "a/b")


def test_output_without_a_status_line_is_a_tracker_error() -> None:
    with pytest.raises(TrackerError, match="a/b: gh printed no HTTP"):
        parse_reply(b"gh: something went wrong\n", "a/b")


def test_a_secondary_limit_with_retry_after_is_rate_limited_from_now() -> None:
    reply = parse_reply(b"HTTP/1.1 403 Forbidden\nRetry-After: 120\r\n\r\n{}", "a/b")
    with pytest.raises(RateLimited) as raised:
        check(reply, "a/b", now=1000.0)
    assert raised.value.until_epoch == 1120.0


def test_a_cursor_that_is_not_ours_is_a_tracker_error_naming_the_repository() -> None:
    with pytest.raises(TrackerError, match="a/b: unreadable comment cursor"):
        CommentCursor.decode("17", "a/b")


def test_a_403_for_a_permission_the_app_lacks_names_the_permissions_github_accepts() -> None:
    reply = parse_reply(
        b"HTTP/1.1 403 Forbidden\n"
        b"X-Accepted-GitHub-Permissions: issues=write; pull_requests=write,contents=read\r\n\r\n"
        b'{"message": "Resource not accessible by integration"}',
        "acme/widgets",
    )
    with pytest.raises(TrackerError) as raised:
        check(reply, "acme/widgets", now=1000.0)
    assert str(raised.value) == (
        "acme/widgets: forbidden (HTTP 403: Resource not accessible by integration); the token lacks the "
        "permission GitHub asks for here: issues=write, or pull_requests=write and contents=read"
    )


def test_a_403_without_the_permissions_header_says_only_what_github_said() -> None:
    reply = parse_reply(b'HTTP/1.1 403 Forbidden\r\n\r\n{"message": "This installation has been suspended"}', "a/b")
    with pytest.raises(TrackerError) as raised:
        check(reply, "a/b", now=1000.0)
    assert str(raised.value) == "a/b: forbidden (HTTP 403: This installation has been suspended)"
