"""The dashboard's pages, its login, and its event stream, over the control plane's services.

``install`` adds them to an app that serves the control plane (``agentcontext.server.app``
composes the two); the pages read only what the services answer, under the API's access rules.

Pages are left out of the OpenAPI document: they are for people, the API is for programs.
Without a valid login cookie every page redirects to ``/login``; a page of something the
user may not see (another user's chat, a private workspace's agent) is 404, as in the API.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, FastAPI, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from sse_starlette import EventSourceResponse

from agentcontext.control.agent_link import AgentReplyError
from agentcontext.control.identity import UserPrincipal
from agentcontext.control.wire import DiffBody
from agentcontext.dashboard import agent_tabs, markdown, session
from agentcontext.dashboard.render import HERE, SECURITY_HEADERS, page
from agentcontext.errors import AgentContextError, AuthError, ForbiddenError, NotFoundError, UnavailableError
from agentcontext.resource import Kind
from agentcontext.skills import files as skill_files
from agentcontext.web.recheck import Recheck

router = APIRouter(include_in_schema=False)
Viewer = Annotated[UserPrincipal, Depends(session.require_user)]
PING = 15.0  # seconds between two keep-alive comments of an event stream, and between two checks of its listener


# --- login ------------------------------------------------------------------------------


@router.get("/login")
async def login_form(request: Request) -> HTMLResponse:
    return page(request, "login.html", None)


@router.post("/login")
async def login(request: Request, token: Annotated[str, Form()] = "") -> Response:
    """A token (pasted, or from a login link) signs nobody in yet: the answer names the account and asks."""
    if not session.same_origin(request):
        raise session.Forbidden()
    plane = session.plane_of(request)
    try:
        issued = await plane.access.begin_login(token.strip())
    except AuthError:
        return page(request, "login.html", None, 401, error="That is not a user's API token (acu_...).")
    current = await session.user_of(request)
    confirm = session.csrf_of(issued.secret)
    response = page(request, "login_confirm.html", None, account=issued.user, current=current, confirm_csrf=confirm)
    session.pend(response, request, issued.secret)
    return response


@router.post("/login/confirm")
async def confirm_login(request: Request) -> Response:
    """The user's answer: yes makes the session (ending the browser's previous one), no drops the login."""
    pending = request.cookies.get(session.PENDING_COOKIE, "")
    await session.check_form(request, pending)
    if not pending:
        raise session.Forbidden()
    plane = session.plane_of(request)
    if (await request.form()).get("answer") != "yes":
        await plane.access.end_session(pending)
        response: Response = RedirectResponse("/login", status_code=303)
        session.drop_pending(response)
        return response
    try:
        issued = await plane.access.confirm_login(pending)
    except AuthError:
        return page(request, "login.html", None, 401, error="That login waited too long, or was answered already.")
    previous = request.cookies.get(session.COOKIE, "")
    if previous:
        await plane.access.end_session(previous)
    response = RedirectResponse("/", status_code=303)
    session.log_in(response, request, issued.secret)
    return response


@router.post("/logout")
async def logout(request: Request, user: Viewer) -> Response:
    await session.check_form(request)
    await session.plane_of(request).access.end_session(request.cookies.get(session.COOKIE, ""))
    response = RedirectResponse("/login", status_code=303)
    session.log_out(response)
    return response


# --- pages ----------------------------------------------------------------------------------


@router.get("/")
async def home(request: Request, user: Viewer) -> HTMLResponse:
    data = await session.plane_of(request).views.overview(user)
    return page(request, "home.html", user, overview=data, events="/ui/events")


@router.get("/ui/agents/{agent_id}")
async def inventory(request: Request, user: Viewer, agent_id: str, status: str = "", view: str = "") -> HTMLResponse:
    views = session.plane_of(request).views
    found = await views.inventory(user, agent_id, status or None)
    tabs = await agent_tabs.build(views, user, found, view, status)
    return page(
        request, "inventory.html", user, inv=found, status=status, tabs=tabs, events=f"/ui/events?agent={agent_id}"
    )


@router.get("/ui/agents/{agent_id}/resource")
async def resource(
    request: Request, user: Viewer, agent_id: str, source: Annotated[str, Query(alias="id")]
) -> HTMLResponse:
    views = session.plane_of(request).views
    agent, found = await views.resource(user, agent_id, source)
    if found.kind is not Kind.SKILL:
        return page(request, "file.html", user, agent=agent, res=found)
    body = markdown.render(skill_files.body(found.content)) if found.content is not None else None
    listed = await views.skill_files(user, agent_id, found.name or "")
    return page(
        request,
        "skill.html",
        user,
        agent=agent,
        res=found,
        body=body,
        files=listed.files,
        unreachable=listed.unreachable,
    )


@router.get("/ui/agents/{agent_id}/mcp")
async def mcp(request: Request, user: Viewer, agent_id: str) -> HTMLResponse:
    return await _mcp_page(request, user, agent_id, None)


@router.post("/ui/agents/{agent_id}/mcp/approve")
async def approve_mcp(request: Request, user: Viewer, agent_id: str) -> HTMLResponse:
    """The Approve button: the agent records the approval, bound to the entry and tools the page showed."""
    await session.check_form(request)
    form = await request.form()
    server, digest, tool_set = (str(form.get(key) or "") for key in ("server", "digest", "tool_set"))
    try:
        notice = (await session.plane_of(request).admin.approve_mcp(user, agent_id, server, digest, tool_set), False)
    except (AgentReplyError, UnavailableError) as exc:
        notice = (exc.detail or exc.message if isinstance(exc, AgentReplyError) else str(exc), True)
    return await _mcp_page(request, user, agent_id, notice)


async def _mcp_page(
    request: Request, user: UserPrincipal, agent_id: str, notice: tuple[str, bool] | None
) -> HTMLResponse:
    agent, servers = await session.plane_of(request).views.mcp_servers(user, agent_id)
    return page(
        request,
        "mcp.html",
        user,
        agent=agent,
        servers=servers,
        notice=notice,
        events=f"/ui/events?agent={agent_id}",
        page_url=f"/ui/agents/{agent_id}/mcp",
    )


@router.get("/ui/chats")
async def chat_list(request: Request, user: Viewer) -> HTMLResponse:
    chats = await session.plane_of(request).chats.listing(user)
    return page(request, "chats.html", user, chats=chats)


@router.get("/ui/chats/{chat_id}")
async def chat(request: Request, user: Viewer, chat_id: str) -> HTMLResponse:
    return await _chat_page(request, user, chat_id, None)


@router.post("/ui/chats/{chat_id}/refresh")
async def refresh(request: Request, user: Viewer, chat_id: str) -> HTMLResponse:
    await session.check_form(request)
    done = await session.plane_of(request).chats.refresh(user, chat_id)
    return await _chat_page(request, user, chat_id, done.diff, done.discovered_error)


async def _chat_page(
    request: Request,
    user: UserPrincipal,
    chat_id: str,
    diff: DiffBody | None,
    discovered_error: str | None = None,
) -> HTMLResponse:
    chats = session.plane_of(request).chats
    turn = await chats.prompt(user, chat_id)  # what the API's /prompt answers, as values
    summary = await chats.get(user, chat_id)  # after the prompt: a first turn binds and pins the chat
    return page(
        request,
        "chat.html",
        user,
        chat=summary,
        turn=turn,
        diff=diff,
        discovered_error=discovered_error,
        events=f"/ui/events?chat={chat_id}",
        page_url=f"/ui/chats/{chat_id}",
    )


# --- live updates ---------------------------------------------------------------------------


@router.get("/ui/events")
async def events(request: Request, user: Viewer, chat: str = "", agent: str = "") -> Response:
    """Server-sent events for a page: a chat's stream, an agent's (online, snapshots), or all visible agents'.

    Only a page's own ``EventSource`` may open one (``Sec-Fetch-Dest: empty``): a frame or an image of a page of
    another port on this host (same site: the cookie goes along) would hold the browser's connections to the
    dashboard. The session and what it may see are asked again at each ping and before an event goes out."""
    if request.headers.get("sec-fetch-dest", "empty") != "empty":
        raise ForbiddenError("an event stream is opened by a page's script, not as a frame or an image")
    plane = session.plane_of(request)

    async def topics_for(viewer: UserPrincipal) -> tuple[str, ...]:
        if chat:  # 404 for another user's chat, before the stream
            return tuple((await plane.chats.event_start(viewer, chat)).topics)
        return tuple(await plane.views.agent_topics(viewer, agent or None))  # 404 for an agent it may not see

    topics = await topics_for(user)

    async def still() -> bool:  # the same session's user, seeing the same topics (else the page opens it anew)
        again = await session.user_of(request)
        if again is None or again.user_id != user.user_id:
            return False
        try:
            return await topics_for(again) == topics
        except AgentContextError:
            return False

    recheck = Recheck(still)

    async def stream() -> AsyncIterator[dict[str, str]]:
        with plane.broker.subscribe(topics) as receive:
            yield {"event": "ready", "data": "{}"}
            while True:
                event = None
                with anyio.move_on_after(PING):
                    try:
                        event = await receive.receive()
                    except anyio.EndOfStream:
                        return
                if not await recheck.allowed(now=event is None):
                    return
                if event is not None:
                    yield {"event": event.kind, "data": json.dumps(event.data)}

    return EventSourceResponse(stream(), ping=PING, headers=SECURITY_HEADERS)


# --- the app --------------------------------------------------------------------------------


def install(app: FastAPI) -> None:
    """Add the dashboard to an app that serves the control plane (its ``state.plane``): pages, static files and
    HTML error pages; the API's error handler keeps answering the API's paths."""
    app.include_router(router)
    app.mount("/ui/static", StaticFiles(directory=HERE / "static"), name="dashboard-static")
    app.add_exception_handler(session.LoginRequired, _to_login)
    app.add_exception_handler(session.Forbidden, _forbidden)
    api_errors = app.exception_handlers.get(AgentContextError)
    if api_errors is not None:
        app.add_exception_handler(AgentContextError, _html_errors(api_errors))


async def _to_login(request: Request, exc: Exception) -> Response:
    return RedirectResponse("/login", status_code=303)


async def _forbidden(request: Request, exc: Exception) -> Response:
    return page(request, "error.html", None, 403, message="This form did not come from this dashboard's page.")


ErrorHandler = Callable[[Request, Any], Response | Awaitable[Response]]


def _html_errors(api: ErrorHandler) -> Callable[[Request, Any], Awaitable[Response]]:
    """Pages answer errors as pages; the API keeps its JSON."""

    async def handle(request: Request, exc: AgentContextError) -> Response:
        if request.url.path.startswith("/api/") or request.url.path == "/ui/events":
            answer = api(request, exc)
            return await answer if inspect.isawaitable(answer) else answer
        user = await session.user_of(request)
        status = 404 if isinstance(exc, NotFoundError) else 400
        return page(request, "error.html", user, status, message=str(exc))

    return handle
