"""One token against every user's MCP sessions: how many it opens, what they cost, whether others still get in.

    .venv/bin/python bench/chat_mcp_sessions.py [--attempts 10000] [--in-flight 8] [--src OTHER/src]

Starts ``agentcontext server`` (SQLite) and ``agentcontext agent`` as ``bench/chat_mcp.py`` does
(``--src``: another checkout's code, to measure before a change), a user ``mallory`` with a chat
of her own, then sends ``--attempts`` bare ``initialize`` requests to that chat with her token,
``--in-flight`` at once, ending no session: the attack of issue 31 (10,000 sessions in about
70 s, then every user's ``initialize`` got 503, the server's memory 183 -> 577 MB). Reports the
answers by status, the sessions opened, the time taken, the server's resident memory before and
after, and the answer to an ``initialize`` by another user (the administrator) afterwards.
"""

from __future__ import annotations

import collections
import json
import tempfile
import time
from pathlib import Path

import anyio
import httpx

from chat_mcp import command_line, pinned_chat, running

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def headers(token: str) -> dict[str, str]:
    return {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {token}"}


async def flood(url: str, token: str, attempts: int, in_flight: int) -> tuple[collections.Counter[int], str]:
    """``attempts`` initializes, ``in_flight`` at once; the answers by status and the first refusal's body."""
    statuses: collections.Counter[int] = collections.Counter()
    refusals: list[str] = []
    left = iter(range(attempts))
    # no more connections than requests in flight (bench/control.py's push_all says why)
    limits = httpx.Limits(max_connections=in_flight, max_keepalive_connections=in_flight)
    async with httpx.AsyncClient(timeout=60, limits=limits) as http:

        async def worker() -> None:
            for _ in left:
                answer = await http.post(url, json=INITIALIZE, headers=headers(token))
                statuses[answer.status_code] += 1
                if answer.status_code != 200 and not refusals:
                    refusals.append(answer.text)

        async with anyio.create_task_group() as group:
            for _ in range(in_flight):
                group.start_soon(worker)
    return statuses, refusals[0] if refusals else ""


def main() -> None:
    args = command_line(__doc__, attempts=10_000, in_flight=8)
    with tempfile.TemporaryDirectory() as folder, running(Path(folder), args.src) as stack:
        admin_chat, _ = pinned_chat(stack.base, stack.admin)
        user = httpx.post(f"{stack.base}/api/v1/users", json={"name": "mallory"}, headers=headers(stack.admin))
        mallory = user.json()["token"]
        her_chat, _ = pinned_chat(stack.base, mallory)
        warm = httpx.post(f"{stack.base}/mcp/chats/{admin_chat}", json=INITIALIZE, headers=headers(stack.admin))
        assert warm.status_code == 200, warm.text  # the SDK loaded, one session of the administrator's open
        before = rss_mb(stack.server_pid)
        started = time.perf_counter()
        target = f"{stack.base}/mcp/chats/{her_chat}"
        statuses, refusal = anyio.run(flood, target, mallory, args.attempts, args.in_flight)
        took = time.perf_counter() - started
        after = rss_mb(stack.server_pid)
        other = httpx.post(f"{stack.base}/mcp/chats/{admin_chat}", json=INITIALIZE, headers=headers(stack.admin))
        print(
            json.dumps(
                {
                    "attempts": args.attempts,
                    "in_flight": args.in_flight,
                    "answers": dict(sorted(statuses.items())),
                    "sessions_opened": statuses[200],
                    "seconds": round(took, 1),
                    "first_refusal": refusal[:300],
                    "server_rss_mb": [round(before), round(after)],
                    "another_users_initialize": other.status_code,
                },
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
