"""Who edited a comment before its first read: REST does not say, GraphQL's `editor` does."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from adapters.github.client import GhClient
from domain.errors import TrackerError
from domain.model import Comment, CommentKind
from domain.refs import RepoRef

# one request for every edited comment of a read; `nodes` answers in the order asked, null for a
# node gone (deleted since the REST read)
QUERY = "query($ids: [ID!]!) { nodes(ids: $ids) { id ... on Comment { editor { login } } } }"


def attribute(
    client: GhClient, repo: RepoRef, comments: Sequence[Comment], node_ids: Mapping[tuple[CommentKind, str], str]
) -> list[Comment]:
    """`comments` with each edited one's `editor`. GitHub naming no editor means no edit after all
    (`edited` false); one it cannot name (a node gone, an id missing) keeps `editor` None, which
    the domain never takes for an authorized person."""
    asked = [c for c in comments if c.edited and node_ids.get((c.kind, c.id))]
    if not asked:
        return list(comments)
    where = str(repo)
    ids = [node_ids[(c.kind, c.id)] for c in asked]
    reply = client.send(repo, "POST", "graphql", payload={"query": QUERY, "variables": {"ids": ids}})
    editors = _editors(reply.json(where), ids, where)
    found: dict[tuple[CommentKind, str], Comment] = {}
    for comment, node_id in zip(asked, ids, strict=True):
        if node_id not in editors:
            continue  # gone: stays edited by nobody known
        login = editors[node_id]
        key = (comment.kind, comment.id)
        found[key] = replace(comment, editor=login) if login else replace(comment, edited=False)
    return [found.get((c.kind, c.id), c) for c in comments]


def _editors(doc: Any, ids: Sequence[str], where: str) -> dict[str, str | None]:
    """node id -> the editor's login (None: not edited), for the nodes GitHub found. A node gone
    comes back null with a NOT_FOUND error; any other error fails the read."""
    errors = doc.get("errors") if isinstance(doc, dict) else None
    other = [e for e in errors or [] if not (isinstance(e, dict) and e.get("type") == "NOT_FOUND")]
    if not isinstance(doc, dict) or other or not isinstance(doc.get("data"), dict):
        raise TrackerError(f"{where}: GraphQL did not say who edited comments ({_first_message(other)})")
    nodes = doc["data"].get("nodes")
    if not isinstance(nodes, list) or len(nodes) != len(ids):
        raise TrackerError(f"{where}: malformed GraphQL reply for comment editors")
    editors: dict[str, str | None] = {}
    for node in nodes:
        if isinstance(node, dict) and isinstance(node.get("id"), str):
            editor = node.get("editor")
            login = editor.get("login") if isinstance(editor, dict) else None
            editors[node["id"]] = str(login) if login else None
    return editors


def _first_message(errors: Any) -> str:
    if isinstance(errors, list) and errors and isinstance(errors[0], dict):
        text = str(errors[0].get("message", ""))
        return " ".join("".join(c for c in text if c.isprintable()).split())[:200]
    return "no data"
