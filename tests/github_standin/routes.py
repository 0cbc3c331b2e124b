"""The stand-in's REST routes: each returns (status, JSON document) from the world."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tests.github_standin.world import Issue, Note, Repo, World, stamp

Reply = tuple[int, Any]
Query = dict[str, str]

_REPO = r"/repos/(?P<owner>[^/]+)/(?P<name>[^/]+)"
_GET: list[tuple[re.Pattern[str], str]] = [
    (re.compile(_REPO + r"$"), "repo"),
    (re.compile(_REPO + r"/issues$"), "issues"),
    (re.compile(_REPO + r"/issues/comments$"), "issue_comments"),
    (re.compile(_REPO + r"/pulls/comments$"), "review_comments"),
    (re.compile(_REPO + r"/issues/(?P<number>[0-9]+)$"), "issue"),
    (re.compile(_REPO + r"/issues/(?P<number>[0-9]+)/comments$"), "thread"),
    (re.compile(_REPO + r"/pulls/(?P<number>[0-9]+)/comments$"), "review_thread"),
    (re.compile(_REPO + r"/pulls/(?P<number>[0-9]+)$"), "pull"),
    (re.compile(_REPO + r"/issues/(?P<number>[0-9]+)/events$"), "events"),
    (re.compile(_REPO + r"/(?P<kind>issues|pulls)/comments/(?P<cid>[0-9]+)$"), "one_comment"),
    (re.compile(_REPO + r"/collaborators/(?P<login>[^/]+)/permission$"), "permission"),
]
_POST: list[tuple[re.Pattern[str], str]] = [
    (re.compile(_REPO + r"/issues/(?P<number>[0-9]+)/comments$"), "post_comment"),
    (re.compile(_REPO + r"/(?P<kind>issues|pulls)/comments/(?P<cid>[0-9]+)/reactions$"), "react"),
]
_PATCH: list[tuple[re.Pattern[str], str]] = [
    (re.compile(_REPO + r"/issues/comments/(?P<cid>[0-9]+)$"), "edit_comment"),
]
_NOT_FOUND: Reply = (404, {"message": "Not Found"})
_REACTIONS = {"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}


class Routes:
    """Listings return every matching entry; the server pages them."""

    def __init__(self, world: World) -> None:
        self.world = world

    def dispatch(self, method: str, path: str, query: Query, payload: Any) -> Reply:
        if (method, path) == ("POST", "/api/graphql"):
            return self.graphql(payload)
        table = {"GET": _GET, "POST": _POST, "PATCH": _PATCH}.get(method, [])
        for pattern, name in table:
            match = pattern.match(path)
            if match is None:
                continue
            repo = self.world.repos.get(f"{match['owner']}/{match['name']}")
            if repo is None or not repo.visible:
                return _NOT_FOUND
            handler: Callable[..., Reply] = getattr(self, name)
            return handler(repo, match.groupdict(), query, payload)
        return _NOT_FOUND

    # --- reads ---------------------------------------------------------------------------

    def graphql(self, payload: Any) -> Reply:
        """Only what the-loop asks: `nodes(ids:)` with each comment's `editor`, in the order asked,
        null and a NOT_FOUND error for an id that names no comment, as GitHub answers."""
        query = str((payload or {}).get("query", ""))
        if "nodes(ids:" not in query or "editor" not in query:
            return 200, {"errors": [{"message": "the stand-in answers only comment editors"}]}
        notes = {n.node_id: n for r in self.world.repos.values() for n in r.notes}
        nodes: list[Any] = []
        errors = []
        for node_id in payload.get("variables", {}).get("ids", []):
            note = notes.get(node_id)
            if note is None:
                errors.append(
                    {"type": "NOT_FOUND", "message": f"Could not resolve to a node with the global id of '{node_id}'"}
                )
            editor = None if note is None or note.editor is None else {"login": note.editor}
            nodes.append(None if note is None else {"id": node_id, "editor": editor})
        return 200, {"data": {"nodes": nodes}} | ({"errors": errors} if errors else {})

    def repo(self, repo: Repo, _: dict[str, str], __: Query, ___: Any) -> Reply:
        return 200, {"full_name": repo.full_name, "private": False}

    def issues(self, repo: Repo, _: dict[str, str], query: Query, __: Any) -> Reply:
        wanted = [label for label in query.get("labels", "").split(",") if label]
        state = query.get("state", "open")
        chosen = [
            i
            for i in repo.issues.values()
            if i.listed
            and (state == "all" or i.state == state)
            and all(label in i.labels for label in wanted)
            and stamp(i.updated_at) >= query.get("since", "")
        ]
        return 200, [self.issue_json(repo, i) for i in _sorted(chosen, query, default="created")]

    def issue(self, repo: Repo, match: dict[str, str], _: Query, __: Any) -> Reply:
        found = repo.issues.get(int(match["number"]))
        return _NOT_FOUND if found is None else (200, self.issue_json(repo, found))

    def pull(self, repo: Repo, match: dict[str, str], _: Query, __: Any) -> Reply:
        """What the-loop reads of a pull request: its head and base, `head.repo` null once the fork
        is deleted, as GitHub answers; an issue's number is not found here."""
        found = repo.issues.get(int(match["number"]))
        if found is None or not found.pull_request:
            return _NOT_FOUND
        head = repo.full_name if found.head_repo is None else found.head_repo
        doc = self.issue_json(repo, found) | {
            "head": {"sha": found.head_sha, "repo": {"full_name": head} if head else None},
            "base": {"repo": {"full_name": repo.full_name}},
        }
        return 200, doc

    def issue_comments(self, repo: Repo, _: dict[str, str], query: Query, __: Any) -> Reply:
        return 200, self._notes(repo, query, review=False)

    def review_comments(self, repo: Repo, _: dict[str, str], query: Query, __: Any) -> Reply:
        return 200, self._notes(repo, query, review=True)

    def thread(self, repo: Repo, match: dict[str, str], query: Query, __: Any) -> Reply:
        """One issue's (or pull request's) issue comments, oldest first; `since` filters on update."""
        return self._item_notes(repo, int(match["number"]), query | {"sort": "created", "direction": "asc"}, False)

    def review_thread(self, repo: Repo, match: dict[str, str], query: Query, __: Any) -> Reply:
        number = int(match["number"])
        issue = repo.issues.get(number)
        if issue is None or not issue.pull_request:
            return _NOT_FOUND
        return self._item_notes(repo, number, query, True)

    def events(self, repo: Repo, match: dict[str, str], _: Query, __: Any) -> Reply:
        issue = repo.issues.get(int(match["number"]))
        if issue is None:
            return _NOT_FOUND
        return 200, [
            {"id": 500000 + n, "event": event, "label": {"name": label}, "created_at": stamp(at)}
            for n, (event, label, at) in enumerate(issue.events)
        ]

    def one_comment(self, repo: Repo, match: dict[str, str], _: Query, __: Any) -> Reply:
        cid, review = int(match["cid"]), match["kind"] == "pulls"
        found = [n for n in repo.notes if n.id == cid and n.review == review]
        return (200, self.note_json(repo, found[0])) if found else _NOT_FOUND

    def permission(self, repo: Repo, match: dict[str, str], _: Query, __: Any) -> Reply:
        """A collaborator's role as GitHub answers it: the legacy `permission` and the full `role_name`;
        a login who is not a collaborator is not found."""
        found = repo.collaborators.get(match["login"].casefold())
        if found is None:
            return _NOT_FOUND
        role, legacy = found
        return 200, {"permission": legacy, "role_name": role, "user": {"login": match["login"]}}

    # --- writes --------------------------------------------------------------------------

    def post_comment(self, repo: Repo, match: dict[str, str], _: Query, payload: Any) -> Reply:
        number = int(match["number"])
        if number not in repo.issues or not isinstance(payload, dict) or "body" not in payload:
            return 422 if number in repo.issues else 404, {"message": "Validation Failed"}
        note = self.world.add_comment(repo.full_name, number, str(payload["body"]), author=self.world.actor())
        self.world.posted.append((repo.full_name, number, note.body))
        return 201, self.note_json(repo, note)

    def edit_comment(self, repo: Repo, match: dict[str, str], _: Query, payload: Any) -> Reply:
        """An issue comment's new body, edited by the token's user (GitHub lets an author edit)."""
        cid = int(match["cid"])
        found = [n for n in repo.notes if n.id == cid and not n.review]
        if not found:
            return _NOT_FOUND
        if not isinstance(payload, dict) or "body" not in payload:
            return 422, {"message": "Validation Failed"}
        if found[0].author != self.world.actor():
            return 403, {"message": "Must have admin rights to Repository."}
        self.world.edit_comment(repo.full_name, cid, str(payload["body"]), editor=self.world.actor())
        return 200, self.note_json(repo, found[0])

    def react(self, repo: Repo, match: dict[str, str], _: Query, payload: Any) -> Reply:
        cid, review = int(match["cid"]), match["kind"] == "pulls"
        if not any(n.id == cid and n.review == review for n in repo.notes):
            return _NOT_FOUND
        content = payload.get("content") if isinstance(payload, dict) else None
        if content not in _REACTIONS:
            return 422, {"message": "Validation Failed"}
        login = self.world.actor()
        self.world.reactions.append((repo.full_name, cid, str(content)))
        self.world.reactors.append((repo.full_name, cid, str(content), login, _user_type(login)))
        return 201, {"id": len(self.world.reactions), "content": content, "user": _user(login)}

    # --- JSON ----------------------------------------------------------------------------

    def issue_json(self, repo: Repo, issue: Issue) -> dict[str, Any]:
        web = f"https://{self.world.host}/{repo.full_name}"
        doc: dict[str, Any] = {
            "id": issue.number * 7 + 100000,
            "number": issue.number,
            "title": issue.title,
            "user": _user(issue.author),
            "labels": [{"name": n} for n in issue.labels],
            "state": issue.state,
            "body": issue.body or None,
            "html_url": f"{web}/{'pull' if issue.pull_request else 'issues'}/{issue.number}",
            "created_at": stamp(issue.created_at),
            "updated_at": stamp(issue.updated_at),
        }
        if issue.pull_request:
            merged = stamp(issue.merged_at) if issue.merged_at else None
            doc["pull_request"] = {"html_url": doc["html_url"], "merged_at": merged}
        return doc

    def note_json(self, repo: Repo, note: Note) -> dict[str, Any]:
        api = f"https://{self.world.host}/api/v3/repos/{repo.full_name}"
        web = f"https://{self.world.host}/{repo.full_name}"
        doc: dict[str, Any] = {
            "id": note.id,
            "node_id": note.node_id,
            "user": _user(note.author),
            "body": note.body,
            "created_at": stamp(note.created_at),
            "updated_at": stamp(note.updated_at),
        }
        if note.review:
            doc |= {
                "path": note.path,
                "line": note.line,
                "pull_request_url": f"{api}/pulls/{note.number}",
                "html_url": f"{web}/pull/{note.number}#discussion_r{note.id}",
            }
        else:
            doc |= {
                "issue_url": f"{api}/issues/{note.number}",
                "html_url": f"{web}/issues/{note.number}#issuecomment-{note.id}",
            }
        return doc

    def _item_notes(self, repo: Repo, number: int, query: Query, review: bool) -> Reply:
        since = query.get("since", "")
        chosen = [n for n in repo.notes if n.number == number and n.review == review and stamp(n.updated_at) >= since]
        return 200, [self.note_json(repo, n) for n in _sorted(chosen, query, default="created")]

    def _notes(self, repo: Repo, query: Query, *, review: bool) -> list[dict[str, Any]]:
        since = query.get("since", "")
        chosen = [n for n in repo.notes if n.listed and n.review == review and stamp(n.updated_at) >= since]
        return [self.note_json(repo, n) for n in _sorted(chosen, query, default="created")]


def _user(login: str) -> dict[str, str]:
    return {"login": login, "type": _user_type(login)}


def _user_type(login: str) -> str:
    # GitHub gives an App's bot the login `<slug>[bot]`, which no person's login can take
    return "Bot" if login.lower().endswith("[bot]") else "User"


def _sorted(rows: list[Any], query: Query, *, default: str) -> list[Any]:
    key = "updated_at" if query.get("sort", default) == "updated" else "created_at"
    descending = query.get("direction", "desc") == "desc"
    tie = "number" if rows and isinstance(rows[0], Issue) else "id"
    return sorted(rows, key=lambda r: (getattr(r, key), getattr(r, tie)), reverse=descending)
