"""A raw stdio MCP server (no SDK) that floods: answers of any size, streamed, or endless list-changed notices.

Run as ``python flood.py [id-last]``. It speaks just enough JSON-RPC for a client to
initialize, list its tools and call them: ``flood`` with ``{"bytes": N}`` answers a text result
of N ``x`` characters, written in 1 MiB pieces, so the server itself never holds it. With
``id-last`` the answer's keys come in the order the TypeScript SDK writes them (``result``
first, ``id`` at the very end), so a reader that cuts the message must find the id in its
tail. ``notify`` sends a notification of N bytes (nothing answers it).

``notices`` with ``{"seconds": S, "rate": R}`` sends ``notifications/tools/list_changed``
from a thread for S seconds, R a second (0: as fast as the client reads), and answers when
it ends with the number sent so far (listings and calls are answered meanwhile). Each
notice announces a real change: the description of ``latest`` is ``version N``, N the
notices sent before the listing. ``stats`` answers JSON ``{"lists", "sent"}``: the
``tools/list`` requests answered and the notices sent.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

PIECE = 1024 * 1024
ID_LAST = "id-last" in sys.argv[1:]
TOOLS = [
    {"name": "flood", "description": "Answers with N bytes.", "inputSchema": {"type": "object"}},
    {"name": "notify", "description": "Sends an N-byte notification.", "inputSchema": {"type": "object"}},
    {"name": "echo", "description": "Answers its text.", "inputSchema": {"type": "object"}},
    {"name": "notices", "description": "Floods list-changed notices.", "inputSchema": {"type": "object"}},
    {"name": "stats", "description": "Counts listings and notices.", "inputSchema": {"type": "object"}},
]
CAPABILITIES = {"tools": {"listChanged": True}}
NOTICE = '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n'
written = threading.Lock()  # whole messages: the notices' thread writes too
counts = {"lists": 0, "sent": 0}


def send(message: dict[str, Any]) -> None:
    with written:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def stream_text(size: int, head: str, tail: str) -> None:
    """``head`` + ``size`` x's + ``tail`` + newline, written piece by piece."""
    out = sys.stdout
    with written:
        out.write(head)
        left = size
        while left > 0:
            piece = min(PIECE, left)
            out.write("x" * piece)
            left -= piece
        out.write(tail + "\n")
        out.flush()


def listing() -> list[dict[str, Any]]:
    with written:  # the version matches the notices sent before the answer
        counts["lists"] += 1
        latest = {"name": "latest", "description": f"version {counts['sent']}", "inputSchema": {"type": "object"}}
    return [*TOOLS, latest]


def notices(request_id: Any, seconds: float, rate: float) -> None:
    start, sent = time.monotonic(), 0
    while (elapsed := time.monotonic() - start) < seconds:
        if rate and sent >= elapsed * rate:
            time.sleep(min(0.001, 1 / rate))
            continue
        with written:
            counts["sent"] += 1
            sys.stdout.write(NOTICE)
            sys.stdout.flush()
        sent += 1
    send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": str(counts["sent"])}]}})


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
                "result": {"protocolVersion": version, "capabilities": CAPABILITIES, "serverInfo": info},
            }
        )
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": listing()}})
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
        elif name == "notices":
            seconds, rate = float(arguments.get("seconds", 1)), float(arguments.get("rate", 0))
            threading.Thread(target=notices, args=(request_id, seconds, rate), daemon=True).start()
        elif name == "stats":
            with written:
                text = json.dumps(counts)
            send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}})
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
