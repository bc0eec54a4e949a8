"""``agentcontext audit --connect``: the approved MCP servers' tools, judged as the agent judges them.

Only servers the user approved are started (never a pending one, whatever ``mcp.trust``
says: an audit must not run what nobody approved). Each is connected as the agent does
(:class:`~agentcontext.workspace_mcp.client.upstream.UpstreamManager`), its tools listed and compared
with the pinned ones, then closed. Findings, on the config file that declares the server:

* ``mcp-tools`` [info]: the tools a server offers;
* ``hidden-characters``, ``bidi-control``, ``tag-characters`` [as for files], ``html-comment``
  [warning]: hidden text in a tool's name, description or input schema texts, which the
  agent removes before a prompt (a name with hidden characters is not offered at all);
* ``tool-description-long`` [warning]: a description over 2 KiB, cut in the prompt;
* ``mcp-tools-changed`` [error]: tools that differ from those approved (withheld until the
  user approves them again), with what changed;
* ``mcp-connect-failed`` [warning]: a server that could not be connected or listed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from agentcontext.audit.findings import Finding, Severity, printable
from agentcontext.audit.report import hidden_characters, html_comments
from agentcontext.settings.config import McpSettings
from agentcontext.workspace_mcp.client.status import SERVING, ServerStatus
from agentcontext.workspace_mcp.client.upstream import UpstreamManager
from agentcontext.workspace_mcp.config import ServerSpec
from agentcontext.workspace_mcp.tool_pins import Definition
from agentcontext.workspace_mcp.tool_text import MAX_DESCRIPTION_BYTES
from agentcontext.workspace_mcp.trust import TrustStore


async def tool_findings(
    specs: Sequence[ServerSpec],
    settings: McpSettings,
    *,
    work_dir: str,
    environ: Mapping[str, str],
    store: TrustStore,
) -> list[Finding]:
    """Connect to each approved server of ``specs``, list its tools, and judge them."""
    strict = replace(settings, trust="approve")
    async with UpstreamManager(strict, work_dir=work_dir, environ=environ, store=store, restarts=False) as manager:
        approved = [spec for spec in specs if store.approved(manager.launch(spec))]
        if not approved:
            return []
        await manager.reload(approved)
        statuses = {s.name: s for s in manager.statuses()}
        listings = manager.listings()
    out: list[Finding] = []
    for spec in approved:
        out += _server_findings(spec, statuses[spec.name], listings.get(spec.name, ()))
    return out


def _server_findings(spec: ServerSpec, status: ServerStatus, listed: Sequence[Definition]) -> list[Finding]:
    where = spec.config_path
    server = f'server "{printable(spec.name)}"'
    if status.state not in SERVING:
        message = f"{server} could not be connected to list its tools: {status.error or status.state}"
        return [Finding("mcp-connect-failed", Severity.WARNING, where, printable(message))]
    names = ", ".join(printable(str(t.get("name"))) for t in listed) or "none"
    out = [Finding("mcp-tools", Severity.INFO, where, f"{server} offers {len(listed)} tools: {names}")]
    for tool in listed:
        label = f'{server} tool "{printable(str(tool.get("name")))}"'
        for what, text in _texts(tool):
            for found in hidden_characters(where, text) + html_comments(where, text):
                message = f"{label} {what}: {found.message}"
                out.append(Finding(found.code, found.severity, where, printable(message)))
        size = len(str(tool.get("description") or "").encode("utf-8"))
        if size > MAX_DESCRIPTION_BYTES:
            message = f"{label} has a description of {size} bytes: the prompt gets its first {MAX_DESCRIPTION_BYTES}"
            out.append(Finding("tool-description-long", Severity.WARNING, where, message))
    for change in status.changes:
        message = (
            f'{server} tool "{printable(change.tool)}" {change.change} since it was approved: withheld until you'
            f" approve it again (agentcontext mcp trust {spec.name}):\n{printable(change.diff)}"
        )
        out.append(Finding("mcp-tools-changed", Severity.ERROR, where, message))
    return out


def _texts(tool: Definition) -> Iterator[tuple[str, str]]:
    """``(where, text)`` for a tool's name, description and every string of its schema and annotations."""
    yield "name", str(tool.get("name") or "")
    yield "description", str(tool.get("description") or "")
    for key in ("input_schema", "annotations"):
        yield from _strings(tool.get(key), key)


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield f"{path} key", str(key)
            yield from _strings(item, f"{path}/{str(key)[:64]}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{path}/{index}")
    elif isinstance(value, str):
        yield path, value
