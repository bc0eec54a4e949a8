"""What a new connection costs the control plane: ``/healthz`` on a new connection each time against one kept open.

    .venv/bin/python bench/new_connection.py [--count 200] [--rounds 10] [--db sqlite|postgresql]

One ``agentcontext server`` on loopback (``bench/control.py``'s, on a fresh SQLite file or a
throwaway PostgreSQL cluster). Each round sends ``--count`` requests for ``GET /healthz``, each on a
connection of its own (connect, request, answer, close), then as many on one kept-alive connection;
the server process's CPU time (``bench/percpu.py``'s ``CpuClock``) is read around each batch. The
difference is what accepting, setting up and closing a connection costs the server: after a restart
every agent and chat of a deployment comes back on a new one (``bench/load.py``'s first 15 s). The
client is a bare socket, so its own cost stays out of the figure; the kernel's work for the
loopback connection is partly charged to the server, as it would be.
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: tests/pg_cluster.py

from tests.pg_cluster import TempCluster

from control import populate, servers
from percpu import CpuClock


def _answer(sock: socket.socket) -> None:
    """Read one ``/healthz`` answer (a small body: headers and body arrive together, or close to it)."""
    got = b""
    while b"\r\n\r\n" not in got or not got.rstrip().endswith(b"}"):
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"the server closed the connection: {got[:200]!r}")
        got += chunk
    if not got.startswith(b"HTTP/1.1 200"):
        raise ConnectionError(f"unexpected answer: {got[:200]!r}")


def per_request_us(clock: CpuClock, send: Callable[[], None], count: int) -> float:
    before = clock()
    for _ in range(count):
        send()
    return (clock() - before) / count * 1e6


@contextlib.contextmanager
def database(kind: str, tmp: Path) -> Iterator[str]:
    if kind == "sqlite":
        yield f"sqlite:///{tmp}/control.db"
        return
    with TempCluster.start() as cluster:
        yield cluster.create_database("newconn")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=200, help="requests of each kind a round")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentcontext-newconn-") as name, database(args.db, Path(name)) as url:
        populate(url, 0)
        with servers(url, 1, Path(name), "new-connection") as (bases, _logs, processes):
            clock = CpuClock(processes[0].pid)
            address = urlsplit(bases[0])
            host, port = address.hostname or "127.0.0.1", address.port or 80
            request = f"GET /healthz HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode()

            def fresh() -> None:
                with socket.create_connection((host, port)) as sock:
                    sock.sendall(request)
                    _answer(sock)

            with socket.create_connection((host, port)) as kept:

                def again() -> None:
                    kept.sendall(request)
                    _answer(kept)

                rounds = [
                    (per_request_us(clock, fresh, args.count), per_request_us(clock, again, args.count))
                    for _ in range(args.rounds)
                ]
    new, kept_us = statistics.median(r[0] for r in rounds), statistics.median(r[1] for r in rounds)
    extra = statistics.median(r[0] - r[1] for r in rounds)
    print(f"GET /healthz, server CPU a request ({args.db}; medians of {args.rounds} rounds of {args.count}):")
    print(f"  on a new connection each {new:7.1f} us")
    print(f"  on one kept connection   {kept_us:7.1f} us")
    print(f"  a new connection's cost  {extra:7.1f} us (per round: new - kept)")


if __name__ == "__main__":
    main()
