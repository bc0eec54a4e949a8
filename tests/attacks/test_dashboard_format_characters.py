"""Bidi and line-break characters in what a repository or a server wrote are shown as codes on every page.

Found by a review in a real browser: a server named ``ok\\u202eevil`` turned the MCP page's
error line (the ``mcp trust ... --digest`` command to run) around, a supporting file named
``rtl\\u202egnp.exe`` read as ``rtlexe.png``, and a touched path reversed a chat's "for" column.
The names were escaped in headings but not in errors, warnings, file lists and paths.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcontext.resource import Kind, Resource, Scope, Status
from tests.dashboard.conftest import bobs_mcp_page, dashboard_world

pytestmark = pytest.mark.anyio
RLO = "\u202e"


async def test_an_mcp_servers_error_and_warnings_show_bidi_controls_as_codes(tmp_path: Path) -> None:
    name = f"ok{RLO}evil"
    error = f'not approved: run agentcontext mcp trust --work-dir /w "{name}" --digest 1234'
    server = Resource(
        Kind.MCP_SERVER, name, Scope.PROJECT, Status.INVALID, error=error, warnings=(f"tool x{RLO}y renamed\nagain",)
    )
    async with dashboard_world(tmp_path) as world:
        page = await bobs_mcp_page(world, server)
    section = page[page.index('<section class="server"') : page.index("</section>")]
    assert RLO not in section.split(">", 1)[1]  # the attribute that names the section for scripts aside
    assert "Last error: not approved: run agentcontext mcp trust --work-dir /w &#34;ok\\u202eevil&#34;" in section
    assert '<div class="warning">tool x\\u202ey renamed\\u000aagain</div>' in section
