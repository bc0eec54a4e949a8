"""Deleting the texts nothing points at, and what its indexes cost a push, on SQLite and PostgreSQL.

    .venv/bin/python bench/collect.py [--agents 1000] [--files 20] [--pushes 300] [--rounds 3]
                                      [--only sqlite|postgresql]

Two databases side by side, both driven by this code: one at revision 0005 (``before``: no index on the
four columns that point at a text) and one at the newest (``after``: migration 0006's indexes). Each gets
``--agents`` agents (workspace ws-NNNN, agent "main"), each with a first push of ``--files`` instruction
files of ~1 KiB of their own text and one chat pinned to it (its rows copied: as many pinned rows again).
Then, ``--rounds`` times and alternating the two databases, ``--pushes`` pushes each change the first file
of one agent (round-robin) and its chat is refreshed (re-pinned: the old text is then unreferenced), each
push and refresh timed (wall clock: the database's own work is in it), and then one whole collection
(``contents.unreferenced_page`` and ``delete_unreferenced``, page by page, as ``SyncService.collect_contents``
runs them) deletes what those pushes left. Reported per database and side: the median push and refresh, the
collection's time, and the texts it deleted (each round, the ``--pushes`` texts its refreshes let go).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: tests/pg_cluster.py

from tests.pg_cluster import bench_database

from agentcontext.control import chats, contents, identity, ingest, migrate
from agentcontext.control.agent_secret import SecretBox
from agentcontext.control.agentselect import DEFAULT_SUFFIX
from agentcontext.control.db import Database
from agentcontext.control.identity import UserPrincipal
from agentcontext.control.models import now
from agentcontext.resource import Kind, Resource, Scope, Status
from agentcontext.snapshot import aggregate_hash
from agentcontext.wire.sync import PushRequest, validated

BEFORE = "0005"  # the revision before the indexes
BOX = SecretBox.ephemeral()


def _file(agent: int, number: int, version: int) -> Resource:
    text = f"# Agent {agent}, file {number}, version {version}\n" + "Run the tests before committing. " * 30
    data = text.encode()
    return Resource(
        Kind.INSTRUCTION_FILE, f"/w/d{number}/AGENTS.md", Scope.PROJECT, Status.OK, size_bytes=len(data),
        content_hash=hashlib.sha256(data).hexdigest(), content=text, doc_order=number,
    )  # fmt: skip


def _push(agent: int, versions: list[int]) -> PushRequest:
    resources = sorted((_file(agent, n, v) for n, v in enumerate(versions)), key=lambda r: r.id)
    raw = {
        "version": max(versions) + 1,
        "aggregate_hash": aggregate_hash(resources),
        "work_dir": "/w",
        "resources": [r.to_dict() for r in resources],
        "initial": False,
    }
    return validated(PushRequest, raw)


class World:
    """One database with its agents, their files' versions and a chat each."""

    def __init__(self, db: Database, agents: int, files: int) -> None:
        self.db = db
        self.ids: list[str] = []
        self.chat_ids: list[str] = []
        self.versions = [[0] * files for _ in range(agents)]
        issued = db.write(lambda s: identity.create_user(s, "alice"))
        self.user = user = UserPrincipal("user", issued.id, "alice", False)
        for number in range(agents):
            agent_id = db.write(partial(identity.create_agent, workspace_name=f"ws-{number:04d}", name="main")).id
            self.ids.append(agent_id)
            self._ingest(number)
            new = chats.NewChat(workspace=f"ws-{number:04d}")
            self.chat_ids.append(
                db.write(partial(chats.create, user=user, new=new, suffix=DEFAULT_SUFFIX, now=now())).id
            )
            self.turn = number
            self.push_one()
        self.turn = 0

    def _ingest(self, agent: int) -> None:
        push = _push(agent, self.versions[agent])
        outcome = self.db.write_rows(lambda c: ingest.ingest(c, self.ids[agent], push, now=now(), box=BOX))
        assert outcome.accepted

    def push_one(self) -> tuple[float, float]:
        """One agent's push that changes its first file, then its chat's refresh; their wall times in seconds."""
        agent = self.turn % len(self.ids)
        versions = self.versions[agent]
        versions[0] = max(versions) + 1
        self.turn += 1
        started = time.perf_counter()
        self._ingest(agent)
        pushed = time.perf_counter()
        chat = self.chat_ids[agent]
        self.db.write_rows(partial(chats.refresh, user=self.user, chat_id=chat, suffix=DEFAULT_SUFFIX, now=now()))
        return pushed - started, time.perf_counter() - pushed

    def collect(self) -> tuple[float, int]:
        started = time.perf_counter()
        removed, after = 0, ""
        while True:
            page = self.db.read_rows(partial(contents.unreferenced_page, after=after))
            if page.unreferenced:
                removed += self.db.write_rows(partial(contents.delete_unreferenced, keys=page.unreferenced))
            if page.last is None:
                return time.perf_counter() - started, removed
            after = page.last


@contextmanager
def _databases(backend: str) -> Iterator[dict[str, Database]]:
    if backend == "sqlite":
        with tempfile.TemporaryDirectory(prefix="agentcontext-collect-") as folder:
            found = {side: Database(f"sqlite:///{folder}/{side}.db") for side in ("before", "after")}
            yield found
            for db in found.values():
                db.dispose()
        return
    with bench_database("before") as (cluster, url):
        found = {"before": Database(url), "after": Database(cluster.create_database("after"))}
        yield found
        for db in found.values():
            db.dispose()


def run(backend: str, args: argparse.Namespace) -> dict[str, Any]:
    figures: dict[str, dict[str, list[float]]] = {
        side: {"push_ms": [], "refresh_ms": [], "collect_ms": [], "deleted": []} for side in ("before", "after")
    }
    with _databases(backend) as dbs:
        worlds: dict[str, World] = {}
        for side, db in dbs.items():
            migrate.upgrade(db, BEFORE if side == "before" else "head")
            started = time.perf_counter()
            worlds[side] = World(db, args.agents, args.files)
            print(
                f"{backend} {side}: {args.agents} agents set up in {time.perf_counter() - started:.1f} s",
                file=sys.stderr,
            )
            worlds[side].collect()  # nothing to delete yet; warms the pages
        for round_ in range(args.rounds):
            order = ("before", "after") if round_ % 2 == 0 else ("after", "before")
            for side in order:
                world = worlds[side]
                times = [world.push_one() for _ in range(args.pushes)]
                took, removed = world.collect()
                figures[side]["push_ms"].append(statistics.median(t[0] for t in times) * 1000)
                figures[side]["refresh_ms"].append(statistics.median(t[1] for t in times) * 1000)
                figures[side]["collect_ms"].append(took * 1000)
                figures[side]["deleted"].append(removed)
    return {
        side: {
            "push_ms": round(statistics.median(f["push_ms"]), 3),
            "refresh_ms": round(statistics.median(f["refresh_ms"]), 3),
            "collect_ms": round(statistics.median(f["collect_ms"]), 1),
            "deleted": f["deleted"],
            "rounds": {k: [round(v, 3) for v in f[k]] for k in ("push_ms", "refresh_ms", "collect_ms")},
        }
        for side, f in figures.items()
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--pushes", type=int, default=300, help="pushes a round, each changing one file")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", choices=["sqlite", "postgresql"], action="append")
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"machine": f"{platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}"}
    for backend in args.only or ["sqlite", "postgresql"]:
        report[backend] = run(backend, args)
        for side in ("before", "after"):
            got = report[backend][side]
            print(
                f"{backend:10} {side:6}  push {got['push_ms']:6.2f} ms  refresh {got['refresh_ms']:6.2f} ms"
                f"  collection {got['collect_ms']:9.1f} ms"
                f"   deleted {got['deleted']}"
            )
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
