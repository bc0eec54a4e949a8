"""A Python client for the control plane's API; the CLI's ``chats`` commands use it.

    client = ControlClient("http://127.0.0.1:8765", token)
    chat = client.create_chat("my-workspace")
    turn = client.prompt(chat["id"])            # {"system": ..., "tools": [...]}
    result = client.call_tool(chat["id"], "read_skill", {"name": "review"})

Error answers become the package's errors (``NotFoundError``, ``AuthError``, ...) carrying
the server's message and detail.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import quote

import httpx

from agentcontext.errors import (
    AgentContextError,
    AuthError,
    ConflictError,
    ForbiddenError,
    InvalidRequestError,
    NotFoundError,
    UnavailableError,
)

_ERRORS: dict[int, type[AgentContextError]] = {
    400: InvalidRequestError,
    401: AuthError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    413: InvalidRequestError,
}


def _path(*parts: str) -> str:
    """``/api/v1/`` plus the parts, each encoded whole: an id or a tool name may hold ``/`` or ``?``."""
    return "/api/v1/" + "/".join(quote(part, safe="") for part in parts)


class ControlClient:
    def __init__(
        self, base_url: str, token: str, *, timeout: float = 120.0, transport: httpx.BaseTransport | None = None
    ):
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers={"Authorization": f"Bearer {token}"},
            timeout=timeout,
            transport=transport,
        )

    def __enter__(self) -> ControlClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _call(self, method: str, path: str, *, json_body: Any = None, params: Mapping[str, Any] | None = None) -> Any:
        try:
            response = self._http.request(method, path, json=json_body, params=params)
        except httpx.HTTPError as exc:
            raise UnavailableError(f"cannot reach the control plane at {self._http.base_url}: {exc}") from None
        if response.status_code >= 400:
            raise _error(response)
        if response.status_code == 204 or not response.content:
            return None
        return response.json()

    # chats
    def create_chat(
        self,
        workspace: str | None,
        *,
        status: str | None = None,
        parent_id: str | None = None,
        title: str = "",
        plan_mode: bool = False,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"workspace": workspace, "parent_id": parent_id, "title": title, "plan_mode": plan_mode}
        if status is not None:
            body["status"] = status
        result: dict[str, Any] = self._call("POST", "/api/v1/chats", json_body=body)
        return result

    def chat(self, chat_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", _path("chats", chat_id))
        return result

    def chats(self, *, archived: bool = False) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self._call("GET", "/api/v1/chats", params={"archived": archived})
        return result

    def update_chat(self, chat_id: str, **changes: Any) -> dict[str, Any]:
        result: dict[str, Any] = self._call("PATCH", _path("chats", chat_id), json_body=changes)
        return result

    def refresh(self, chat_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self._call("PUT", _path("chats", chat_id, "context"))
        return result

    def touched(self, chat_id: str, paths: Sequence[str]) -> dict[str, Any]:
        """Pin the instruction files that apply to paths the chat touched; what was added."""
        result: dict[str, Any] = self._call(
            "POST", _path("chats", chat_id, "touched"), json_body={"paths": list(paths)}
        )
        return result

    def prompt(self, chat_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", _path("chats", chat_id, "prompt"))
        return result

    def call_tool(self, chat_id: str, name: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = self._call(
            "POST", _path("chats", chat_id, "tools", name), json_body=dict(arguments or {})
        )
        return result

    def events(self, chat_id: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """The chat's events as ``(kind, data)``, starting with ``state``; runs until the server closes."""
        with self._http.stream("GET", _path("chats", chat_id, "events"), timeout=None) as response:
            if response.status_code >= 400:
                response.read()
                raise _error(response)
            kind = "message"
            for line in response.iter_lines():
                if line.startswith("event:"):
                    kind = line.partition(":")[2].strip()
                elif line.startswith("data:"):
                    yield kind, json.loads(line.partition(":")[2].strip())
                    kind = "message"

    # personal skills
    def skills(self) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self._call("GET", "/api/v1/users/me/skills")
        return result

    def add_skill(self, content: str) -> dict[str, Any]:
        result: dict[str, Any] = self._call("POST", "/api/v1/users/me/skills", json_body={"content": content})
        return result

    def update_skill(self, name: str, content: str) -> dict[str, Any]:
        result: dict[str, Any] = self._call("PUT", _path("users", "me", "skills", name), json_body={"content": content})
        return result

    def delete_skill(self, name: str) -> None:
        self._call("DELETE", _path("users", "me", "skills", name))

    # who and where
    def me(self) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", "/api/v1/users/me")
        return result

    def workspaces(self) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self._call("GET", "/api/v1/workspaces")
        return result

    def overview(self) -> dict[str, Any]:
        """Server, workspaces, agents, snapshots, chat counts and problems (``agentcontext status``)."""
        result: dict[str, Any] = self._call("GET", "/api/v1/overview")
        return result


def _error(response: httpx.Response) -> AgentContextError:
    try:
        body = response.json()
    except ValueError:
        body = {}
    message = body.get("detail") or body.get("message") if isinstance(body, dict) else None
    text = str(message or response.text[:200] or f"HTTP {response.status_code}")
    kind = _ERRORS.get(response.status_code, UnavailableError)
    return kind(text)
