"""A stdio MCP server written by hand (no SDK, so it can break the protocol's promises) that lies as told.

Run as ``python liar.py MODE [ARG]``. It answers ``initialize``; ``tools/list`` with one tool ``t``
unless the mode says otherwise; ``tools/call`` with a text result unless the mode says otherwise:

* ``blank-lines SECONDS``: a call fills stdout with blank lines for ``SECONDS``, then never answers.
* ``bad-result``: a call's result has ``content`` that is not a list.
* ``endless-pages``: every listing page holds 20 tools and a new cursor.
* ``same-cursor``: every listing page holds 20 tools and the same cursor.
* ``empty-pages``: every listing page holds no tool and a new cursor.
* ``listed FILE``: the listing is the JSON list of tools in ``FILE``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

MODE = sys.argv[1]
ARG = sys.argv[2] if len(sys.argv) > 2 else ""
SCHEMA = {"type": "object", "properties": {}}


def send(message_id: Any, result: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}) + "\n")
    sys.stdout.flush()


def listing(params: dict[str, Any]) -> dict[str, Any]:
    if MODE == "listed":
        with open(ARG, encoding="utf-8") as file:
            return {"tools": json.load(file)}
    if MODE in ("endless-pages", "same-cursor", "empty-pages"):
        page = int(params.get("cursor") or "0") if MODE != "same-cursor" else 0
        tools = [] if MODE == "empty-pages" else [{"name": f"t{page}_{n}", "inputSchema": SCHEMA} for n in range(20)]
        return {"tools": tools, "nextCursor": str(page + 1)}
    return {"tools": [{"name": "t", "inputSchema": SCHEMA}]}


def call(message_id: Any) -> None:
    if MODE == "blank-lines":
        block, end = b"\n" * 65536, time.monotonic() + float(ARG)
        while time.monotonic() < end:
            os.write(1, block)
        time.sleep(3600)
    elif MODE == "bad-result":
        send(message_id, {"content": "not a list"})
    else:
        send(message_id, {"content": [{"type": "text", "text": "ok"}]})


def main() -> None:
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        message_id, method, params = message.get("id"), message.get("method"), message.get("params") or {}
        if message_id is None:
            continue  # a notification
        if method == "initialize":
            info = {"name": "liar", "version": "1"}
            capabilities = {"tools": {"listChanged": True}}
            send(
                message_id,
                {"protocolVersion": params["protocolVersion"], "capabilities": capabilities, "serverInfo": info},
            )
        elif method == "tools/list":
            send(message_id, listing(params))
        elif method == "tools/call":
            call(message_id)
        else:
            send(message_id, {})


if __name__ == "__main__":
    main()
