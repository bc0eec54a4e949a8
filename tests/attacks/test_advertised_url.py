"""A hostile agent's advertised URL: the control plane calls agents only where agents live.

The agent says where the control plane reaches its API, and the control plane calls there with
a chat's requests and the agent's run secret, and hands the answer to the chat. As reported, an
agent advertising ``http://127.0.0.1:PORT/internal/api?x=`` turned a chat's ``read_skill_file``
into a GET of that internal service, whose JSON came back to the chat. Now the URL is a scheme,
host and port only (refused at push, heartbeat and the agent's start otherwise), it names a host
of the networks the operator allows (loopback and the private ranges by default; a host name only
when listed), a URL stored before these checks is not called, and every request goes to one of
the agent API's own paths (no dot segment a server could resolve elsewhere).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import sqlalchemy as sa
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from agentcontext.agent.service import AgentOptions, check_options
from agentcontext.control import tables as t
from agentcontext.control.agent_link import AgentAddress, AgentLink
from agentcontext.control.agent_networks import AgentNetworks
from agentcontext.control.settings import ControlSettings
from agentcontext.errors import ConfigError, UnavailableError
from agentcontext.testing import skill_md
from agentcontext.wire.sync import ContractError
from tests.agent.conftest import serving
from tests.control.live import Control, Workspace, control_plane, workspace

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

SKILL = {".agents/skills/lint/SKILL.md": skill_md("lint", "Lints"), ".agents/skills/lint/reference.md": "Use ruff.\n"}
INTERNAL = "internal: the database password"


@dataclass
class Internal:
    """A service on loopback that is no agent, and every request it received (raw path and query)."""

    url: str
    seen: list[str] = field(default_factory=list)


@contextlib.asynccontextmanager
async def internal_service() -> AsyncIterator[Internal]:
    found = Internal("")

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        found.seen.append(scope["raw_path"].decode() + "?" + Request(scope).url.query)
        await JSONResponse({"content": INTERNAL, "files": [INTERNAL]})(scope, receive, send)

    async with serving(app) as url:
        found.url = url
        yield found


async def read_reference(control: Control) -> str:
    chat = await control.chat()
    result = await control.call(chat, "read_skill_file", {"name": "lint", "path": "reference.md"})
    return result.content


async def test_an_advertised_url_with_a_path_query_or_fragment_is_refused_and_never_called(
    tmp_path: Path, home: Path
) -> None:
    async with (
        internal_service() as internal,
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", SKILL, home=home) as live,
    ):
        for url in (
            f"{internal.url}/internal/api?x=",  # the report's
            f"{internal.url}?x=",
            f"{internal.url}/#",
            f"{internal.url}/internal",
            f"http://user:pw@{internal.url.removeprefix('http://')}",
        ):
            with pytest.raises(ContractError, match="agent.url must be"):
                await control.push(live.agent.snapshot, url=url, home=home)
            with pytest.raises(ContractError, match="agent.url must be"):
                await control.plane.sync.heartbeat(control.principal, {"agent": {"url": url}})
            with pytest.raises(ConfigError, match="--advertise-url"):  # the agent refuses it at its start
                check_options(AgentOptions(token="t", control_plane="http://127.0.0.1:1", advertise_url=url))
        content = await read_reference(control)  # the agent's own URL is the one kept
    assert internal.seen == []
    assert INTERNAL not in content and "Use ruff." in content


async def advertise(control: Control, url: str) -> None:
    """The agent's heartbeat saying it is at ``url``."""
    await control.plane.sync.heartbeat(control.principal, {"agent": {"url": url}})


async def refused_everywhere(control: Control, live: Workspace, url: str) -> None:
    with pytest.raises(ContractError, match="not among the hosts and networks agents may advertise"):
        await control.push(live.agent.snapshot, url=url, home=live.home)
    with pytest.raises(ContractError, match="not among the hosts and networks agents may advertise"):
        await advertise(control, url)


async def test_an_agent_outside_the_networks_agents_may_advertise_is_refused(tmp_path: Path, home: Path) -> None:
    async with control_plane(tmp_path) as control, workspace(control, tmp_path / "w", SKILL, home=home) as live:
        for url in (
            "http://169.254.169.254",  # a cloud's metadata service (link-local)
            "http://[fe80::1]:8080",
            "http://0.0.0.0:8766",  # the unspecified address reaches this machine
            "http://93.184.215.14:80",  # the internet
            "http://metadata.google.internal",  # a name nobody listed: DNS may point it anywhere
            "http://2130706433:8766",  # 127.0.0.1 spelled as one number is a name, not an address
            "http://[::ffff:169.254.169.254]:80",
        ):
            await refused_everywhere(control, live, url)
        for url in ("http://10.1.2.3:8766", "http://[fd00::7]:8766", "http://192.168.1.9", "http://localhost:9"):
            await advertise(control, url)  # the workspace network: accepted


async def test_the_operator_narrows_or_widens_the_networks_agents_may_advertise(tmp_path: Path, home: Path) -> None:
    networks = AgentNetworks.parse(["10.20.0.0/16", "agents.internal"])
    async with control_plane(tmp_path, settings=ControlSettings(agent_networks=networks)) as control:
        advertised = "http://10.20.0.5:8766"
        async with workspace(control, tmp_path / "w", SKILL, home=home, serve=False, advertise=advertised) as live:
            await advertise(control, "http://agents.internal:8766")
            for url in ("http://127.0.0.1:8766", "http://10.21.0.5:8766", "http://other.internal:8766"):
                await refused_everywhere(control, live, url)


async def test_a_url_stored_before_the_checks_is_not_called(tmp_path: Path, home: Path) -> None:
    async with (
        internal_service() as internal,
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", SKILL, home=home),
    ):
        stored = f"{internal.url}/internal/api?x="  # as an older control plane kept it
        control.db.write(
            lambda s: s.execute(
                sa.update(t.agents).where(t.agents.c.id == control.principal.agent_id).values(url=stored)
            )
        )
        content = await read_reference(control)
    assert internal.seen == []
    assert INTERNAL not in content and content.startswith("workspace connection failed: ")


@pytest.mark.parametrize("name", ["..", ".", "a/../.."])
async def test_requests_go_only_to_the_agent_apis_own_paths(name: str) -> None:
    async with internal_service() as internal:
        link = AgentLink()
        address = AgentAddress(internal.url, "run-secret")
        try:
            with contextlib.suppress(UnavailableError):
                await link.skill_file(address, name, "x")
            with contextlib.suppress(UnavailableError):
                await link.skill_files(address, name)
            for path in ("../../../internal/api", "./x", "a//b"):
                with contextlib.suppress(UnavailableError):
                    await link.skill_file(address, "lint", path)
        finally:
            await link.aclose()
    for target in internal.seen:
        segments = target.partition("?")[0].split("/")
        assert target.startswith("/api/v0/skills/"), target
        assert not {".", "..", ""} & set(segments[1:]), target
