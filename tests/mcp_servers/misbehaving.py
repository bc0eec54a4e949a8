"""A small stdio MCP server (official SDK, low level) that misbehaves as its first argument says.

Modes: ``fine`` (tools ``echo``, ``env``, ``pid``), ``empty`` (no tools at all),
``crash-on-start`` (a line on stderr, exit 3 before speaking MCP), ``hang-initialize``
(reads stdin, never answers), ``hang-call`` (``slow`` never returns), ``exit-mid-call``
(``die`` exits the process mid-call), ``garbage`` (non-JSON lines on stdout before and
between messages), ``huge`` (``flood`` returns ~3 MB of text, or ``bytes`` of it), ``changing`` (``add``
registers ``added`` and sends ``notifications/tools/list_changed``), ``spawn-child``
(starts a ``sleep 300`` grandchild; ``child`` returns its pid), ``long-names`` (tools
whose ``server__tool`` names are over 64 characters and share a long prefix), ``content``
(``picture`` returns a PNG image block, ``bad_picture`` an image block that is not base64,
``two_texts`` two text blocks, ``mixed`` a text block then an image block), ``odd-names``
(tools named ``files.read``, ``files_read``, ``files/write`` and ``ünï code``: not function names).

Every mode with tools also has ``echo`` and ``pid``. Run as ``python misbehaving.py MODE``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import anyio
import mcp.types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.stdio import stdio_server

CRASH_MESSAGE = "misbehaving: cannot start: no license key"
FLOOD_BYTES = 3_000_000
LONG_PREFIX = "l" * 70
SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
MODE_TOOLS: dict[str, tuple[str, ...]] = {
    "fine": ("env",),
    "empty": (),
    "hang-initialize": (),
    "hang-call": ("slow",),
    "exit-mid-call": ("die",),
    "garbage": (),
    "huge": ("flood",),
    "changing": ("add",),
    "spawn-child": ("child",),
    "long-names": (f"{LONG_PREFIX}_one", f"{LONG_PREFIX}_two"),
    "content": ("picture", "bad_picture", "two_texts", "mixed"),
    "odd-names": ("files.read", "files_read", "files/write", "ünï code"),
}
PNG_BASE64 = (  # a 1x1 transparent PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
BAD_BASE64 = "this is *not* base64!"

mode = sys.argv[1] if len(sys.argv) > 1 else "fine"
tools: list[str] = [] if mode == "empty" else ["echo", "pid", *MODE_TOOLS.get(mode, ())]
grandchild: subprocess.Popen[bytes] | None = None


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=value)])


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[types.Tool(name=name, input_schema=SCHEMA) for name in tools])


async def call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    arguments = params.arguments or {}
    name = params.name
    if name not in tools:
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"no tool {name}")], is_error=True)
    if name == "env":
        return text(os.environ.get(str(arguments["name"]), "<unset>"))
    if name == "pid":
        return text(str(os.getpid()))
    if name == "slow":
        await anyio.sleep_forever()
    if name == "die":
        os._exit(1)
    if name == "flood":
        return text("x" * int(arguments.get("bytes", FLOOD_BYTES)))
    if name == "add":
        tools.append("added")
        await ctx.session.send_tool_list_changed()
        return text("added a tool")
    if name in MODE_TOOLS["content"]:
        return content_result(name)
    if name == "child" and grandchild is not None:
        return text(str(grandchild.pid))
    if mode == "garbage":
        os.write(1, b"garbage between messages\n")
    return text(str(arguments.get("text", name)))


def content_result(name: str) -> types.CallToolResult:
    """The ``content`` mode's tools: blocks other than one text."""
    picture = types.ImageContent(type="image", data=PNG_BASE64, mime_type="image/png")
    blocks: dict[str, list[types.TextContent | types.ImageContent]] = {
        "picture": [picture],
        "bad_picture": [types.ImageContent(type="image", data=BAD_BASE64, mime_type="image/png")],
        "two_texts": [types.TextContent(type="text", text="first"), types.TextContent(type="text", text="second")],
        "mixed": [types.TextContent(type="text", text="a caption"), picture],
    }
    return types.CallToolResult(content=list(blocks[name]))


server: Server[Any] = Server("misbehaving", version="1", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve() -> None:
    if mode == "garbage":  # stdout stays the wire, so stray prints reach the client
        stdin = anyio.wrap_file(open(0, encoding="utf-8", closefd=False))  # noqa: SIM115
        stdout = anyio.wrap_file(open(1, "w", encoding="utf-8", closefd=False))  # noqa: SIM115
        streams = stdio_server(stdin, stdout)
    else:
        streams = stdio_server()
    async with streams as (read, write):
        options = server.create_initialization_options(NotificationOptions(tools_changed=True))
        await server.run(read, write, options)


def main() -> None:
    global grandchild
    if mode == "crash-on-start":
        print(CRASH_MESSAGE, file=sys.stderr, flush=True)
        sys.exit(3)
    if mode == "hang-initialize":
        for _line in sys.stdin:  # read everything, answer nothing, exit when the client goes
            pass
        return
    if mode == "garbage":
        os.write(1, b"this is not JSON\nneither { is this\n")
    if mode == "spawn-child":
        grandchild = subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    anyio.run(serve)


if __name__ == "__main__":
    main()
