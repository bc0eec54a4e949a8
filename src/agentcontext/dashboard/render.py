"""Rendering a dashboard page: the templates (autoescaped), their filters, and the headers every page gets.

Pages allow only the dashboard's own script and style (Content-Security-Policy), are framed by
no page, are never cached, and carry the session's CSRF token for their forms.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from agentcontext import __version__
from agentcontext.audit.findings import printable
from agentcontext.control.identity import UserPrincipal
from agentcontext.dashboard import session
from agentcontext.resource import Status

HERE = Path(__file__).parent
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
# what every answer of the dashboard says besides its content (an event stream's too: no page may frame one)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",  # frame-ancestors' older spelling: no page frames ours
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def status_tone(status: str) -> str:
    """The badge colour of a status: ok, warn (cut or left out on purpose) or bad (not in, with a reason)."""
    if status == Status.OK:
        return "ok"
    if status in (Status.TRUNCATED, Status.SHADOWED, Status.EXCLUDED, Status.DISABLED):
        return "warn"
    return "bad"


templates = Jinja2Templates(directory=HERE / "templates")  # Starlette turns autoescape on
templates.env.filters["size"] = lambda n: _size(int(n or 0))
templates.env.filters["short"] = lambda h: (h or "")[:12]
templates.env.filters["when"] = lambda t: _when(t)
# names and paths a repository or a server wrote, and what an MCP server would run: control, format (bidi) and
# private-use characters shown as \uXXXX, so none reorders or hides the text around it (descriptions and file
# texts are shown as written, with their hidden-text warnings)
templates.env.filters["plain"] = lambda text: printable(str(text or ""))
templates.env.globals["tone"] = status_tone
templates.env.globals["version"] = __version__


def _when(stamp: str | None) -> str:
    """An ISO time as the pages show it: to the second, in UTC."""
    if not stamp:
        return "never"
    try:
        return dt.datetime.fromisoformat(stamp).astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except ValueError:
        return stamp


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    return f"{n / 1024:.1f} KiB" if n < 1024 * 1024 else f"{n / 1024 / 1024:.1f} MiB"


def page(request: Request, name: str, user: UserPrincipal | None, code: int = 200, **context: Any) -> HTMLResponse:
    context.update(user=user, csrf=session.csrf_token(request) if user else "", status_code=code)
    query = request.url.query
    context.setdefault("page_url", request.url.path + (f"?{query}" if query else ""))  # what live updates re-fetch
    response = templates.TemplateResponse(request, name, context, status_code=code)
    response.headers.update(SECURITY_HEADERS)
    return response
