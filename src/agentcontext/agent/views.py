"""``GET /api/v0/context/agents``: each agent's own view of this work dir, side by side (``agentcontext agents``).

The agent's own profile is its last scan; every other profile (``codex``, ``claude``,
``coder``, ``default``) is a scan of the work dir under that profile's settings
(:func:`agent_views.config_for`), by the same scanner, so every read stays beneath its root
exactly as in the agent's own scans. Nothing is served but paths, statuses, sizes and
reasons: never a file's content; with ``agent.push_home_files = false`` no row of the user's home.

The answer is computed once per snapshot version and kept for ``FRESH_FOR`` seconds (files
only another agent reads are not watched, so a change to them shows within that time);
one computation runs at a time, and a caller that arrives meanwhile waits for it and gets
its answer. It must finish within ``TIMEOUT`` seconds (504 otherwise; the computation goes
on, and the next call gets its answer) and stays under ``MAX_BYTES`` (rows cut, counted in
``omitted``: :mod:`agentcontext.wire.views`). Before the first scan it answers 503.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from agentcontext.agent.context import ContextAgent
from agentcontext.errors import AgentContextError
from agentcontext.resource import HOME_SCOPES
from agentcontext.scan import Scanner, ScanResult
from agentcontext.settings.config import Config
from agentcontext.views.agents import VIEW_PROFILES, AgentView, config_for
from agentcontext.wire import views as view_contract

router = APIRouter(prefix="/api/v0")

TIMEOUT = 30.0
FRESH_FOR = 30.0
MAX_BYTES = 1024 * 1024


class ViewCache:
    """The views of one agent's work dir, kept per snapshot version; computed in a worker thread."""

    def __init__(self, agent: ContextAgent) -> None:
        self._agent = agent
        self._lock = threading.Lock()  # one computation at a time, even one abandoned by a timed-out caller
        self._answer: tuple[int, float, bytes] | None = None  # version, when, body
        self._scanners: dict[str, Scanner] = {}
        self._config: Config | None = None  # what the scanners were built for
        self.computed = 0  # how many times the views were computed (not served from the kept answer)

    def answer(self) -> bytes:
        """The views as JSON (call in a worker thread).

        Raises:
            AgentContextError: a scan failed, or another profile's settings cannot be built.
        """
        with self._lock:
            agent = self._agent
            version, result = agent.snapshot.version, agent.last
            if result is None:
                raise AgentContextError("the workspace has not been scanned yet")
            cached = self._answer
            if cached is not None and cached[0] == version and time.monotonic() - cached[1] < FRESH_FOR:
                return cached[2]
            if agent.config != self._config:  # a source declared or removed: every profile scans anew
                self._scanners, self._config = {}, agent.config
            views = [
                AgentView.of_scan(p, result if p == result.config.profile else self._scan(p)).to_dict()
                for p in VIEW_PROFILES
            ]
            if not agent.config.agent.push_home_files:  # only the control plane asks: what stays local is not named
                views = [_without_home(view) for view in views]
            data = {"work_dir": agent.work_dir, "version": version, "agents": views}
            body = view_contract.bounded(data, MAX_BYTES)
            self._answer = (version, time.monotonic(), body)
            self.computed += 1
            return body

    def _scan(self, profile: str) -> ScanResult:
        scanner = self._scanners.get(profile)
        if scanner is None:
            agent = self._agent
            config = config_for(agent.config, profile, agent.work_dir, agent.environ)
            scanner = self._scanners[profile] = Scanner(agent.work_dir, config, environ=agent.environ)
        return scanner.run()


def _error(status: int, message: str, detail: str) -> JSONResponse:
    return JSONResponse({"message": message, "detail": detail}, status_code=status)


@router.get(
    "/context/agents",
    summary="Each agent's own view of the work dir: what each agent and our default load, and why not",
    response_model=view_contract.AgentViewsBody,
)
async def agent_views(request: Request) -> Response:
    agent: ContextAgent = request.app.state.agent
    cache: ViewCache = request.app.state.views
    if agent.last is None:
        return _error(503, "Not ready.", "the workspace has not been scanned yet: ask again once it is ready")
    try:
        with anyio.fail_after(TIMEOUT):
            body = await anyio.to_thread.run_sync(cache.answer, abandon_on_cancel=True)
    except TimeoutError:
        return _error(504, "Gave up.", f"the views did not finish within {TIMEOUT:g} s: ask again shortly")
    except AgentContextError as exc:
        return _error(500, "Could not compute the views.", str(exc))
    return Response(body, media_type="application/json")


_HOME = frozenset(str(scope) for scope in HOME_SCOPES)


def _without_home(view: dict[str, Any]) -> dict[str, Any]:
    return {**view, **{name: [row for row in view[name] if row["scope"] not in _HOME] for name in view_contract.LISTS}}
