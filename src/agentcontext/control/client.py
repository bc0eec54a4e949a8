"""A Python client for the control plane's API; the CLI's ``chats`` and ``status`` commands use it.

    client = ControlClient("http://127.0.0.1:8765", token)
    chat = client.create_chat("my-workspace")
    turn = client.prompt(chat.id)            # turn.system, turn.tools
    result = client.call_tool(chat.id, "read_skill", {"name": "review"})

Answers are the API's own wire models (``control.wire``), read from its JSON: what an answer
left out stays unset, so ``answered(model)`` gives back exactly the JSON the server sent. Error
answers become the package's errors (``NotFoundError``, ``AuthError``, ...) carrying the server's
message and detail.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, TypeAdapter, ValidationError

from agentcontext.control import wire
from agentcontext.errors import (
    AgentContextError,
    AuthError,
    ConflictError,
    ForbiddenError,
    InvalidRequestError,
    NotFoundError,
    UnavailableError,
)

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
_ERRORS: dict[int, type[AgentContextError]] = {
    400: InvalidRequestError,
    401: AuthError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    413: InvalidRequestError,
}
CONNECT_TIMEOUT = 10.0  # seconds to reach the server
TIMEOUT = 30.0  # seconds for an answer: a server that takes the connection and never answers is given up on
TOOL_TIMEOUT = 120.0  # a tool call's answer: the control plane gives the workspace's MCP server 90 s
_CHATS = TypeAdapter(list[wire.ChatResponse])
_SKILLS = TypeAdapter(list[wire.SkillSummary])
_WORKSPACES = TypeAdapter(list[wire.WorkspaceEntry])


def _path(*parts: str) -> str:
    """``/api/v1/`` plus the parts, each encoded whole: an id or a tool name may hold ``/`` or ``?``."""
    return "/api/v1/" + "/".join(quote(part, safe="") for part in parts)


def answered(model: BaseModel) -> dict[str, Any]:
    """A model read from an answer, as the JSON the server sent (what it left out stays out)."""
    return model.model_dump(mode="json", exclude_unset=True)


class ControlClient:
    def __init__(
        self, base_url: str, token: str, *, timeout: float = TIMEOUT, transport: httpx.BaseTransport | None = None
    ):
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx.Timeout(timeout, connect=min(CONNECT_TIMEOUT, timeout)),
            transport=transport,
        )

    def __enter__(self) -> ControlClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _call(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        params: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> bytes:
        """The answer's body (empty for 204). Raises: the package's error for an error answer."""
        waits = self._http.timeout if timeout is None else httpx.Timeout(timeout, connect=self._http.timeout.connect)
        try:
            response = self._http.request(method, path, json=json_body, params=params, timeout=waits)
        except (httpx.ReadTimeout, httpx.WriteTimeout):  # reached, but no answer in time: it may still act on it
            raise UnavailableError(
                f"the control plane at {self._http.base_url} gave no answer to {method} {path} within {waits.read:g} s;"
                " it may still do what was asked: look before asking again"
            ) from None
        except httpx.HTTPError as exc:
            raise UnavailableError(f"cannot reach the control plane at {self._http.base_url}: {exc}") from None
        if response.status_code >= 400:
            raise _error(response)
        return response.content

    def _model(self, model: type[M], method: str, path: str, **kwargs: Any) -> M:
        return _read(model.model_validate_json, self._call(method, path, **kwargs), f"{method} {path}")

    def _models(self, adapter: TypeAdapter[list[M]], path: str, **kwargs: Any) -> list[M]:
        return _read(adapter.validate_json, self._call("GET", path, **kwargs), f"GET {path}")

    # chats
    def create_chat(
        self,
        workspace: str | None,
        *,
        status: str | None = None,
        parent_id: str | None = None,
        title: str = "",
        plan_mode: bool = False,
    ) -> wire.ChatResponse:
        body: dict[str, Any] = {"workspace": workspace, "parent_id": parent_id, "title": title, "plan_mode": plan_mode}
        if status is not None:
            body["status"] = status
        return self._model(wire.ChatResponse, "POST", "/api/v1/chats", json_body=body)

    def chat(self, chat_id: str) -> wire.ChatResponse:
        return self._model(wire.ChatResponse, "GET", _path("chats", chat_id))

    def chats(self, *, archived: bool = False) -> list[wire.ChatResponse]:
        return self._models(_CHATS, "/api/v1/chats", params={"archived": archived})

    def update_chat(self, chat_id: str, **changes: Any) -> wire.ChatResponse:
        return self._model(wire.ChatResponse, "PATCH", _path("chats", chat_id), json_body=changes)

    def refresh(self, chat_id: str) -> wire.RefreshResponse:
        return self._model(wire.RefreshResponse, "PUT", _path("chats", chat_id, "context"))

    def touched(self, chat_id: str, paths: Sequence[str]) -> wire.TouchedResponse:
        """Pin the instruction files that apply to paths the chat touched; what was added."""
        body = {"paths": list(paths)}
        return self._model(wire.TouchedResponse, "POST", _path("chats", chat_id, "touched"), json_body=body)

    def prompt(self, chat_id: str) -> wire.PromptResponse:
        return self._model(wire.PromptResponse, "GET", _path("chats", chat_id, "prompt"))

    def call_tool(self, chat_id: str, name: str, arguments: Mapping[str, Any] | None = None) -> wire.ToolResultBody:
        path = _path("chats", chat_id, "tools", name)
        body = dict(arguments or {})
        return self._model(wire.ToolResultBody, "POST", path, json_body=body, timeout=TOOL_TIMEOUT)

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
    def skills(self) -> list[wire.SkillSummary]:
        return self._models(_SKILLS, "/api/v1/users/me/skills")

    def add_skill(self, content: str) -> wire.SkillSummary:
        return self._model(wire.SkillSummary, "POST", "/api/v1/users/me/skills", json_body={"content": content})

    def update_skill(self, name: str, content: str) -> wire.SkillSummary:
        path = _path("users", "me", "skills", name)
        return self._model(wire.SkillSummary, "PUT", path, json_body={"content": content})

    def delete_skill(self, name: str) -> None:
        self._call("DELETE", _path("users", "me", "skills", name))

    # who and where
    def me(self) -> wire.MeResponse:
        return self._model(wire.MeResponse, "GET", "/api/v1/users/me")

    def workspaces(self) -> list[wire.WorkspaceEntry]:
        return self._models(_WORKSPACES, "/api/v1/workspaces")

    def overview(self) -> wire.OverviewResponse:
        """Server, workspaces, agents, snapshots, chat counts and problems (``agentcontext status``)."""
        return self._model(wire.OverviewResponse, "GET", "/api/v1/overview")


def _read(parse: Callable[[bytes], T], body: bytes, request: str) -> T:
    """Raises: UnavailableError (an answer that is not the model the API documents for it)."""
    try:
        return parse(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the body"
        raise UnavailableError(
            f"the control plane's answer to {request} is not what this client reads ({where}: {first['msg']})"
        ) from None


def _error(response: httpx.Response) -> AgentContextError:
    """The error an answer says, in the server's words when it gave some (the CLI shows them plainly); else its
    status and where it came from: an HTML page from some other server is no message to show."""
    try:
        body = response.json()
    except ValueError:
        body = None
    message = (body.get("detail") or body.get("message")) if isinstance(body, dict) else None
    if message:
        text = str(message)[:1000]
    else:
        where = f"{response.request.method} {response.request.url}"
        text = f"HTTP {response.status_code} from {where}, with no message (is that an agentcontext control plane?)"
    kind = _ERRORS.get(response.status_code, UnavailableError)
    return kind(text)
