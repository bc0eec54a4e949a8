"""A raw stdio MCP server (no SDK) whose ``flood`` tool answers with a message of any size, streamed.

Run as ``python flood.py [id-last]``. It speaks just enough JSON-RPC for a client to
initialize, list one tool and call it: ``flood`` with ``{"bytes": N}`` answers a text result
of N ``x`` characters, written in 1 MiB pieces, so the server itself never holds it. With
``id-last`` the answer's keys come in the order the TypeScript SDK writes them (``result``
first, ``id`` at the very end), so a reader that cuts the message must find the id in its
tail. ``notify`` sends a notification of N bytes (nothing answers it).
"""

from __future__ import annotations

import json
import sys
from typing import Any

PIECE = 1024 * 1024
ID_LAST = "id-last" in sys.argv[1:]
TOOLS = [
    {"name": "flood", "description": "Answers with N bytes.", "inputSchema": {"type": "object"}},
    {"name": "notify", "description": "Sends an N-byte notification.", "inputSchema": {"type": "object"}},
    {"name": "echo", "description": "Answers its text.", "inputSchema": {"type": "object"}},
]


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def stream_text(size: int, head: str, tail: str) -> None:
    """``head`` + ``size`` x's + ``tail`` + newline, written piece by piece."""
    out = sys.stdout
    out.write(head)
    left = size
    while left > 0:
        piece = min(PIECE, left)
        out.write("x" * piece)
        left -= piece
    out.write(tail + "\n")
    out.flush()


def flood(request_id: Any, size: int) -> None:
    ident = json.dumps(request_id)
    if ID_LAST:
        stream_text(size, '{"result":{"content":[{"type":"text","text":"', f'"}}]}},"jsonrpc":"2.0","id":{ident}}}')
    else:
        stream_text(size, f'{{"jsonrpc":"2.0","id":{ident},"result":{{"content":[{{"type":"text","text":"', '"}]}}')


def answer(request: dict[str, Any]) -> None:
    method, request_id = request.get("method"), request.get("id")
    params = request.get("params") or {}
    if method == "initialize":
        info = {"name": "flood", "version": "1"}
        version = params.get("protocolVersion", "2025-06-18")
        send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "result": {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info},
            }
        )
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        name, arguments = params.get("name"), params.get("arguments") or {}
        if name == "flood":
            flood(request_id, int(arguments.get("bytes", 100_000_000)))
        elif name == "notify":
            stream_text(
                int(arguments.get("bytes", 10_000_000)),
                '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"',
                '"}}',
            )
            send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": "notified"}]}})
        else:
            text = str(arguments.get("text", ""))
            send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}})
    elif request_id is not None:
        send({"jsonrpc": "2.0", "id": request_id, "result": {}})


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            answer(json.loads(line))


if __name__ == "__main__":
    main()
