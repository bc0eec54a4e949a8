"""Calls from the control plane to a workspace agent's API (``/api/v0/``).

Only what needs the live workspace goes here: a skill's file listing and supporting files,
the home directory and plan files for ``propose_plan``, and MCP tool calls. Everything
else is served from the database. Failures become ``UnavailableError`` (cannot reach the
agent) or ``AgentReplyError`` (the agent answered with an error), never httpx exceptions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from agentcontext.errors import AgentContextError, UnavailableError


@dataclass(frozen=True, slots=True)
class AgentAddress:
    url: str
    api_token: str | None
    unusable: str | None = None  # why the agent cannot be called (its secret could not be unsealed here)

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_token}"} if self.api_token else {}


class AgentReplyError(AgentContextError):
    """The agent answered, with an error status."""

    def __init__(self, status: int, message: str, detail: str | None) -> None:
        self.status, self.message, self.detail = status, message, detail
        super().__init__(f"{message} {detail}" if detail else message)


class AgentLink:
    def __init__(
        self,
        *,
        connect_timeout: float = 5.0,
        call_timeout: float = 90.0,
        quick_timeout: float = 10.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        """``call_timeout`` bounds MCP tool calls and file reads; ``quick_timeout`` what must not hold a turn up
        (the best-effort listing of a skill's files, the home directory): a frozen agent that accepts
        connections but never answers costs that long, not a whole call timeout.
        """
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(call_timeout, connect=connect_timeout), transport=transport
        )
        self._quick = httpx.Timeout(quick_timeout, connect=min(connect_timeout, quick_timeout))

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _request(
        self,
        address: AgentAddress,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, str] | None = None,
        quick: bool = False,
    ) -> dict[str, Any]:
        if address.unusable:
            raise UnavailableError(address.unusable)
        url = address.url.rstrip("/") + "/api/v0/" + path
        timeout = self._quick if quick else httpx.USE_CLIENT_DEFAULT
        try:
            response = await self._client.request(
                method, url, json=json, params=params, headers=address.headers, timeout=timeout
            )
        except (httpx.HTTPError, httpx.InvalidURL) as exc:  # InvalidURL: what the agent advertised is no URL
            raise UnavailableError(_describe(exc)) from None
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.status_code in (401, 403):  # a stale secret (the agent restarted): as good as unreachable
            raise UnavailableError("the workspace agent refused the control plane's credentials")
        if response.status_code >= 400:
            message = body.get("message") if isinstance(body, dict) else None
            detail = body.get("detail") if isinstance(body, dict) else None
            raise AgentReplyError(
                response.status_code,
                str(message or f"agent answered {response.status_code}"),
                str(detail) if detail else None,
            )
        if not isinstance(body, dict):
            raise UnavailableError(f"agent answered {response.status_code} without a JSON object")
        return body

    async def skill_files(self, address: AgentAddress, name: str) -> list[str]:
        body = await self._request(address, "GET", f"skills/{quote(name, safe='')}", quick=True)
        files = body.get("files")
        return [str(f) for f in files] if isinstance(files, list) else []

    async def skill_file(self, address: AgentAddress, name: str, path: str) -> str:
        body = await self._request(address, "GET", f"skills/{quote(name, safe='')}/files/{quote(path, safe='/')}")
        return str(body.get("content") or "")

    async def workspace(self, address: AgentAddress) -> dict[str, Any]:
        return await self._request(address, "GET", "workspace", quick=True)

    async def plan_file(self, address: AgentAddress, path: str) -> dict[str, Any]:
        return await self._request(address, "GET", "plan-file", params={"path": path})

    async def call_tool(self, address: AgentAddress, tool_name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return await self._request(
            address, "POST", "mcp/call-tool", json={"tool_name": tool_name, "arguments": arguments}
        )


def _describe(exc: httpx.HTTPError | httpx.InvalidURL) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return "timed out"
    if isinstance(exc, httpx.ConnectError):
        return f"connection refused or unreachable ({exc.request.url.host}:{exc.request.url.port})"
    return str(exc) or type(exc).__name__
