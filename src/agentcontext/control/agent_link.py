"""Calls from the control plane to a workspace agent's API (``/api/v0/``).

Only what needs the live workspace goes here: a skill's file listing and supporting files, the
home directory and plan files for ``propose_plan``, MCP tool calls, the instruction files that
apply to paths a chat touched (``discovered``), the approval of an MCP server the user gave in
the dashboard (the agent writes it to its user's trust store), and each agent profile's view of
the work dir (read with the same models the agent answers with). Calls go to the API's own paths
only (no empty, ``.`` or ``..`` segment, which a server may resolve to another path), at the
scheme, host and port the agent advertised where the operator allows it (``agent_networks``,
checked by ``AgentReach.address``). Everything else is served from the database.
Failures become ``UnavailableError`` (cannot reach the agent) or ``AgentReplyError`` (the agent
answered with an error), never httpx exceptions.
"""

from __future__ import annotations

import json as json_module
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

import anyio
import httpx
from pydantic import ValidationError

from agentcontext.control.agent_http import MAX_BODY, AgentHttp, AgentHttpError
from agentcontext.errors import AgentContextError, UnavailableError
from agentcontext.storable import scrub
from agentcontext.wire.views import AgentViewsBody


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

        ``http://`` agents are called through ``agent_http`` (the lean client), ``https://`` ones and every
        call when a ``transport`` is given (tests) through that httpx transport, without a client around it.
        """
        self._http = AgentHttp() if transport is None else None
        self._transport = transport or httpx.AsyncHTTPTransport()
        self._connect_timeout = connect_timeout
        self._call_timeout = call_timeout
        self._quick_timeout = quick_timeout

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
        await self._transport.aclose()

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
        if any(segment in ("", ".", "..") for segment in path.split("/")):  # a server may resolve it elsewhere
            raise UnavailableError(f"not a path of the agent's API: /api/v0/{path}")
        url = address.url.rstrip("/") + "/api/v0/" + path
        if params:
            url += "?" + urlencode(params)
        body = json_module.dumps(json, separators=(",", ":")).encode() if json is not None else None
        timeout = self._quick_timeout if quick else self._call_timeout
        connect = min(self._connect_timeout, timeout)
        headers = [*address.headers.items(), *([("Content-Type", "application/json")] if body is not None else [])]
        if self._http is not None and url.startswith("http://"):
            try:
                status, content = await self._http.request(
                    method, url, headers, body, connect_timeout=connect, timeout=timeout
                )
            except AgentHttpError as exc:
                raise UnavailableError(str(exc)) from None
            except (ValueError, UnicodeError) as exc:  # what the agent advertised is no usable URL or secret
                raise UnavailableError(f"cannot call the agent: {exc}") from None
        else:
            status, content = await self._send(method, url, headers, body, connect, timeout)
        return _answer(status, content)

    async def _send(
        self, method: str, url: str, headers: list[tuple[str, str]], body: bytes | None, connect: float, timeout: float
    ) -> tuple[int, bytes]:
        """Through the httpx transport: no client (its cookies, redirects, auth and hooks apply to nothing here)."""
        try:
            request = httpx.Request(method, url, headers=headers, content=body)
            request.extensions = {"timeout": httpx.Timeout(timeout, connect=connect).as_dict()}
            with anyio.fail_after(timeout):  # the whole answer, not each read: a trickle is no answer
                response = await self._transport.handle_async_request(request)
                try:
                    return response.status_code, await _capped(response)
                finally:
                    await response.aclose()
        except TimeoutError:
            raise UnavailableError("timed out") from None
        except (httpx.HTTPError, httpx.InvalidURL) as exc:  # InvalidURL: what the agent advertised is no URL
            raise UnavailableError(_describe(exc, url)) from None
        except (ValueError, UnicodeError) as exc:  # what the agent advertised is no usable secret (a header)
            raise UnavailableError(f"cannot call the agent: {exc}") from None

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

    async def approve_mcp(self, address: AgentAddress, server: str, digest: str, tool_set: str) -> str:
        body = await self._request(
            address, "POST", "mcp/approve", json={"server": server, "digest": digest, "tool_set": tool_set}
        )
        return str(body.get("message") or "approved")

    async def agent_views(self, address: AgentAddress) -> AgentViewsBody:
        """Raises: UnavailableError (also for an answer that is not the views), AgentReplyError."""
        body = await self._request(address, "GET", "context/agents")
        try:
            return AgentViewsBody.model_validate(body)
        except ValidationError as exc:
            raise UnavailableError(f"the agent's views are not what they should be: {exc.errors()[0]['msg']}") from None

    async def instructions(self, address: AgentAddress, paths: list[str]) -> dict[str, Any]:
        """The instruction files that apply to ``paths`` (at most the agent's ``ondemand.max_paths``)."""
        return await self._request(address, "POST", "context/instructions", json={"dirs": paths}, quick=True)

    async def call_tool(self, address: AgentAddress, tool_name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return await self._request(
            address, "POST", "mcp/call-tool", json={"tool_name": tool_name, "arguments": arguments}
        )


async def _capped(response: httpx.Response) -> bytes:
    """The answer's body, decoded, at most ``MAX_BODY`` bytes (as the ``http://`` client reads it; a compressed
    answer is counted as it unpacks).

    Raises:
        UnavailableError: the agent sends more.
    """
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > MAX_BODY:
            raise UnavailableError(f"the agent's answer is larger than {MAX_BODY} bytes")
    return bytes(body)


def _answer(status: int, content: bytes) -> dict[str, Any]:
    """The agent's JSON object, or why there is none to use.

    Raises:
        UnavailableError: refused credentials, or no JSON object. AgentReplyError: an error status.
    """
    try:
        # json.loads takes an escaped or encoded half surrogate (``"\\ud800"``): no answer or page could show it
        body = scrub(json_module.loads(content)) if content else None
    except (ValueError, RecursionError):
        body = None
    if status in (401, 403):  # a stale secret (the agent restarted): as good as unreachable
        raise UnavailableError("the workspace agent refused the control plane's credentials")
    if status >= 400:
        message = body.get("message") if isinstance(body, dict) else None
        detail = body.get("detail") if isinstance(body, dict) else None
        raise AgentReplyError(status, str(message or f"agent answered {status}"), str(detail) if detail else None)
    if not isinstance(body, dict):
        raise UnavailableError(f"agent answered {status} without a JSON object")
    return body


def _describe(exc: httpx.HTTPError | httpx.InvalidURL, url: str) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return "timed out"
    if isinstance(exc, httpx.ConnectError):
        where = httpx.URL(url)
        return f"connection refused or unreachable ({where.host}:{where.port})"
    return str(exc) or type(exc).__name__
