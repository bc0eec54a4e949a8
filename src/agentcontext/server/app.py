"""The app ``agentcontext server`` serves: the control plane's API, with the dashboard's pages added to it.

Both run over the one ``ControlPlane`` (its services) behind the API's request guard, so a page
passes the same Host, Origin and size checks as the API; neither package imports the other.
"""

from __future__ import annotations

from fastapi import FastAPI

from agentcontext import dashboard
from agentcontext.control.api import create_app
from agentcontext.control.plane import ControlPlane
from agentcontext.web.guard import Edge


def build_app(plane: ControlPlane, *, background: bool = True, edge: Edge | None = None) -> FastAPI:
    """The API over ``plane`` (``control.api.create_app``) with the dashboard added."""
    app = create_app(plane, background=background, edge=edge)
    dashboard.install(app)
    return app
