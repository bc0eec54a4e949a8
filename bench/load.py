"""Load: 100 agents pushing changing snapshots while 200 chats take turns, for 60 s; nothing lost.

    .venv/bin/python bench/load.py [--agents 100] [--chats 200] [--seconds 60] [--postgres [--replicas 2]]
                                   [--pace stress|realistic] [--scale [--stages 5,10,...]] [--json PATH]

On loopback only, bounded in count and time. One ``agentcontext server`` on a fresh database
(SQLite; ``--postgres``: a throwaway cluster, ``TempCluster``, with ``--replicas`` servers on it:
each agent and each chat talks to one of them, and each chat holds its event stream on the
next one, so events cross replicas), N agents (workspace ws-NNNN,
agent "main") and one user made directly in the database (``bench/control.py``'s ``populate``),
each agent's first snapshot pushed (``initial``), then two chats per workspace. Then, from this
one client process (asyncio on uvloop; each simulated agent and chat with one keep-alive HTTP/1.1
connection of its own, and one more for each chat's event stream: ``bench/http1.py``, about 200
microseconds of CPU a request with the loops' own work, where httpx's async client costs several milliseconds;
each loop sleeps with a plain ``asyncio.sleep``, its tasks all made before the clock starts), at a pace
(``--pace``; ``--period``, ``--turn-gap``, ``--refresh-gap`` change one of its figures):

* ``stress`` (the default): each agent pushes about once a second, heartbeats every ~5 s, each chat
  takes a turn every ~1 s with an MCP call, refreshes at most every 3 s: as fast as a small
  deployment answers;
* ``realistic``: as people work. Each agent heartbeats every ~15 s (the agent's own period) and
  pushes one edited file a minute; each chat takes a turn every ~10 s (its prompt and ``read_skill``,
  no MCP call), and refreshes when told it is out of date, at most every 30 s. Starts are spread
  over each interval.

What each does:

* each agent pushes its snapshot (jittered): 10 resources (two AGENTS.md
  files, the root's and the work dir's, and 8 skills), one file edited by each push in turn
  (``--changes rotate``: the root AGENTS.md, the nested one, then each skill's body, its name and
  description kept; so one push in five changes a text the prompt shows), or the root AGENTS.md
  by every push (``--changes root-every-push``, this load's only mix before 2026-12-03); the
  version increasing; one push in 20 replays an old version (with other content), which the
  server must refuse; plus its heartbeats;
* each chat loops: ``GET /prompt``, ``POST /tools/read_skill`` of a skill in its pin (served
  from the pin), ``POST /tools/time__get_current_time`` (proxied by the server to a real
  ``agentcontext agent`` in front of the real ``mcp-server-time``: every simulated agent
  advertises that one agent's URL; ``stress`` only), a pause (jittered); it holds
  ``GET /events`` open, and on ``out_of_date`` it refreshes (``PUT /context``), at most once
  every refresh gap.

At the end the loops stop, events get a moment to arrive, and the database is read:

* pushes: each agent's stored version and hash are its last accepted push's (higher only when
  a push went unanswered); its stored rows hash to the stored aggregate hash;
* chats: the pinned rows hash to the pinned hash; a chat whose pin differs from its agent's
  latest hash is marked out of date (and one that matches is not), and its stream received
  ``out_of_date`` for that pin; the chat's pin is the one its last refresh answered.

Each count of mismatches must be 0. Reported: requests by kind with p50/p99 latency (and p99 of the requests
started 15 s or more after the loops began: every agent and chat begins within its first period, its
connection new and the caches cold, as after a restart; what comes later is the load once settled), error rate
(non-2xx and transport errors), requests over 250 ms by when they started (5 s windows) beside the
machine's CPUs busy in each (``/proc/stat``; what the host of a virtual machine stole, apart), pushes
accepted and refused, events received, the prompts the server answered from its turn cache
(``X-Prompt-Cache``; and apart, the prompts whose chat's pin had not moved since its previous
prompt, and those after a refresh moved it: a hit when the push edited no text the prompt shows,
or when another chat on the same server rendered the same inputs; with ``root-every-push``, their
share of all prompts bounds the hit rate any cache keyed by what a prompt shows can reach), the
servers' RSS (every second from /proc) and CPU, and this client's CPU and event-loop lag (is the
client the bottleneck?); and while the loops ran, each server's CPU, the PostgreSQL cluster's
(its postmaster, the backends it reaped and those running, from /proc), this client's (a share of a
CPU and microseconds a request), and the connections the agents and chats opened (one each when
the servers keep them open).

``--scale`` runs the load at growing sizes (``--stages``: agents, with two chats each; each a
fresh database and servers, ``--seconds`` long) up to the first size not held, and reports where
each request kind's p99 first passes 250 ms, the largest size held (p99 under 250 ms for every
kind, no request failed, nothing lost), the largest held from 15 s on, and what was saturated at the
first size not held: a server's event loop, the database, this client, or the machine's two CPUs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import hashlib
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import anyio
import httpx
import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: tests/pg_cluster.py

from tests.pg_cluster import TempCluster

from agentcontext.control import identity, rows
from agentcontext.control.db import Database
from agentcontext.resource import Kind, Resource, Scope, Status, Tool
from agentcontext.snapshot import Snapshot, aggregate_hash
from control import OUT, free_port, pct, populate, server_errors, servers
from http1 import Answer, Connection, StreamRefused, TransportError

SKILLS = 8
STREAMS_WAIT = 120.0  # seconds given to every chat's event stream to open before the loops begin
STALE_EVERY = 20  # one push in this many replays an old version
HEARTBEAT_EVERY = 5.0
QUIET = 3.0  # seconds given to the last events after the loops stop
START_MARGIN = 2.0  # seconds to make every loop's task before the first may start
PUSH = "/api/v1/agent/context"
HEARTBEAT = "/api/v1/agent/heartbeat"
KINDS = ("push", "heartbeat", "prompt", "read_skill", "mcp_call", "refresh", "events")
P99_LIMIT_MS = 250.0
# Every agent and chat begins within its first period (an agent's heartbeat: 15 s), its caches cold and its
# connection new, as after a control plane's restart; what starts later is the load once settled.
SETTLED_AFTER = 15.0
MCP_TOOL = "time__get_current_time"
TIME_TOOL = Tool(
    "get_current_time",
    "Get the current time in a specific timezone",
    {"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]},
)
AGENT_TOKEN = "load-agent-token-0123456789"  # the real agent's API token, advertised by every simulated agent
TEXT = (
    "Run the tests before you commit. Keep pull requests small. Migrations go through alembic and must be"
    " reversible. Log with structured fields. Return the error code from the API spec.\n"
)


# --- what the agents push ---------------------------------------------------------------


def _resource(kind: Kind, path: str, scope: Scope, text: str, **extra: Any) -> Resource:
    data = text.encode("utf-8")
    return Resource(kind, path, scope, Status.OK, len(data), hashlib.sha256(data).hexdigest(), text, None, (), **extra)


def skill_name(index: int, n: int) -> str:
    return f"ws{index:04d}-skill-{n}"


def static_resources(index: int) -> list[Resource]:
    """The 9 resources besides the root AGENTS.md: a nested AGENTS.md and 8 skills (and the time server)."""
    root = f"/home/coder/ws-{index:04d}"
    out = [_resource(Kind.INSTRUCTION_FILE, f"{root}/api/AGENTS.md", Scope.PROJECT, TEXT * 3, doc_order=1)]
    for n in range(SKILLS):
        name = skill_name(index, n)
        path = f"{root}/.agents/skills/{name}/SKILL.md"
        out.append(
            _resource(Kind.SKILL, path, Scope.REPO, _skill_body(index, n), name=name, description=_about(index, n))
        )
    out.append(Resource(Kind.MCP_SERVER, "time", Scope.PROJECT, Status.OK, name="time", tools=(TIME_TOOL,)))
    return out


def _about(index: int, n: int) -> str:
    return f"Skill {n} of workspace {index}: how to do task {n} here."


def _skill_body(index: int, n: int, edit: str = "") -> str:
    name = skill_name(index, n)
    return f"---\nname: {name}\ndescription: {_about(index, n)}\n---\n\n# {name}\n\n{edit}" + TEXT * 4


# What each push changes (--changes). ROTATE: the workspace's files are edited in turn, one a push: the root
# AGENTS.md, the nested one, then each skill's body (its name and description kept), so one push in five changes
# a text the prompt shows. ROOT_EVERY_PUSH: every push changes the root AGENTS.md (each re-pin changes the prompt).
ROTATE, ROOT_EVERY_PUSH = "rotate", "root-every-push"
ROTATION = 2 + SKILLS  # the files a rotating push edits in turn


def _edited(version: int, i: int, salt: str) -> str:
    """How often file ``i`` of the rotation has been edited by ``version``, and ``salt`` when this version edits it."""
    return f"{(version - i) // ROTATION}{salt if version % ROTATION == i else ''}"


def _rotated(index: int, fixed: Sequence[Resource], version: int, salt: str) -> list[Resource]:
    """The resources besides the root AGENTS.md at ``version`` of a rotating workspace. The rotation is the root
    AGENTS.md (0), then ``static_resources`` in its order: the nested one (1), skill ``n`` (``2 + n``); file
    ``i`` was last edited at the latest version equal to ``i`` modulo ``ROTATION``."""
    out = []
    for i, resource in enumerate(fixed, start=1):
        if i >= ROTATION:  # the time server: never edited
            out.append(resource)
            continue
        edit = f"Edit {_edited(version, i, salt)}.\n\n"
        text = edit + TEXT * 3 if i == 1 else _skill_body(index, i - 2, edit)
        data = text.encode("utf-8")
        digest = hashlib.sha256(data).hexdigest()
        out.append(resource._replace(content=text, size_bytes=len(data), content_hash=digest))
    return out


UPSTREAM: dict[str, str] = {}  # the real agent every simulated one advertises: url, api_token


def agent_info(index: int) -> dict[str, str]:
    """What agent ``index`` says of itself with each push and heartbeat, as the real agent does: the same each
    time (a heartbeat that said less would be a change its chats' prompts show)."""
    return {"run_id": f"load-{index}", "os": "linux", "home": "/home/coder", **UPSTREAM}


def push_body(
    index: int, fixed: Sequence[Resource], version: int, salt: str, *, initial: bool, changes: str = ROOT_EVERY_PUSH
) -> tuple[bytes, str]:
    """A push of agent ``index`` at ``version`` (``salt`` in what it changes), and the hash it carries: with
    ``ROOT_EVERY_PUSH`` its root AGENTS.md names the version, with ``ROTATE`` one file in turn is edited."""
    root = f"/home/coder/ws-{index:04d}"
    if changes == ROTATE:
        fixed = _rotated(index, fixed, version, salt)
        text = f"# ws-{index:04d} edit {_edited(version, 0, salt)}\n\n" + TEXT
    else:
        text = f"# ws-{index:04d} push {version}{salt}\n\n" + TEXT
    changing = _resource(Kind.INSTRUCTION_FILE, f"{root}/AGENTS.md", Scope.PROJECT, text, doc_order=0)
    ordered = tuple(sorted([changing, *fixed], key=lambda r: r.id))
    snap = Snapshot(
        version=version,
        aggregate_hash=aggregate_hash(ordered),
        work_dir=f"{root}/api",
        project_root=root,
        profile="default",
        resources=ordered,
        payload_bytes=sum(r.payload_bytes for r in ordered),
    )
    body = {**snap.to_dict(), "initial": initial, "agent": agent_info(index)}
    return json.dumps(body, separators=(",", ":")).encode("utf-8"), snap.aggregate_hash


# --- what the client records --------------------------------------------------------------


@dataclass
class Record:
    latency: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in KINDS})
    requests: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)  # non-2xx, or a wrong answer
    cache: Counter[str] = field(default_factory=Counter)  # prompts by X-Prompt-Cache: hit, miss (absent: unknown)
    # the same, of the prompts whose chat's pin had not moved since its previous prompt (a refresh moves it)
    cache_same_pin: Counter[str] = field(default_factory=Counter)
    transport: Counter[str] = field(default_factory=Counter)  # no answer at all
    samples: list[str] = field(default_factory=list)  # the first few failures, said
    slow: list[float] = field(default_factory=list)  # when (perf_counter) each request over the limit started
    # the latencies of the requests started ``SETTLED_AFTER`` seconds or more after the loops began
    settled: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in KINDS})
    began: float = 0.0  # perf_counter when the loops began

    def fail(self, kind: str, what: str, *, transport: bool = False) -> None:
        (self.transport if transport else self.failed)[kind] += 1
        if len(self.samples) < 20:
            self.samples.append(f"{kind}: {what}"[:300])

    async def call(
        self,
        http: Connection,
        kind: str,
        method: str,
        path: str,
        body: bytes = b"",
        json_body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Answer | None:
        self.requests[kind] += 1
        start = time.perf_counter()
        try:
            response = await http.request(method, path, body, json_body=json_body, headers=headers)
        except TransportError as exc:
            self.fail(kind, str(exc), transport=True)
            return None
        took = time.perf_counter() - start
        self.latency[kind].append(took)
        if self.began and start - self.began >= SETTLED_AFTER:
            self.settled[kind].append(took)
        if took * 1000 >= P99_LIMIT_MS:
            self.slow.append(start)
        if not response.ok:
            self.fail(kind, f"{response.status} {response.text[:200]}")
            return None
        return response


@dataclass
class AgentSim:
    index: int
    token: str
    fixed: list[Resource]
    changes: str  # what each push changes (--changes)
    version: int = 0
    accepted: tuple[int, str] = (0, "")  # the last accepted push: version, hash
    unanswered: dict[int, str] = field(default_factory=dict)  # pushes with no answer: version -> hash
    pushes_accepted: int = 0
    pushes_refused: int = 0
    stale_accepted: int = 0  # replays the server took: must stay 0
    fresh_refused: int = 0  # new versions the server refused: must stay 0


@dataclass
class ChatSim:
    id: str
    agent: int
    skill: str
    pinned: str  # the hash the last create or refresh answered
    prompted: str | None = None  # ``pinned`` at the chat's previous prompt
    wanted: bool = False  # an out_of_date came since the last refresh
    last_refresh: float = 0.0
    turns: int = 0
    refreshes: int = 0
    events: Counter[str] = field(default_factory=Counter)
    out_of_date: set[str] = field(default_factory=set)  # pinned hashes an out_of_date event named
    connected: bool = False


# --- the loops ----------------------------------------------------------------------------


class Pace(NamedTuple):
    """How often each agent and chat asks (seconds; each gap jittered)."""

    heartbeat_every: float
    push_every: float
    turn_gap: float  # a chat's pause between turns
    refresh_gap: float  # at least this long between a chat's refreshes
    mcp_calls: bool  # a turn also calls an MCP tool through the real agent


PACES = {
    # as fast as a small deployment's servers answer: the load's only pace before issue 34
    "stress": Pace(heartbeat_every=5.0, push_every=1.0, turn_gap=1.0, refresh_gap=3.0, mcp_calls=True),
    # as people work: the agent's heartbeat (15 s), an edit saved a minute, a chat's turn every ~10 s
    "realistic": Pace(heartbeat_every=15.0, push_every=60.0, turn_gap=10.0, refresh_gap=30.0, mcp_calls=False),
}


def pace_options(args: argparse.Namespace) -> dict[str, Any]:
    """What the command line set of a pace, over its defaults."""
    return {"push_every": args.period, "turn_gap": args.turn_gap, "refresh_gap": args.refresh_gap}


async def push_once(http: Connection, record: Record, agent: AgentSim, rng: random.Random) -> None:
    stale = agent.version > 2 and rng.randrange(STALE_EVERY) == 0
    version = agent.version - 1 if stale else agent.version + 1
    salt = f" replay {rng.random()}" if stale else ""
    body, digest = push_body(agent.index, agent.fixed, version, salt, initial=False, changes=agent.changes)
    if not stale:
        agent.version = version
        agent.unanswered[version] = digest  # until the server says
    response = await record.call(http, "push", "POST", PUSH, body)
    if response is None:
        return
    agent.unanswered.pop(version, None)
    if response.json()["accepted"]:
        agent.pushes_accepted += 1
        agent.stale_accepted += stale
        agent.accepted = max(agent.accepted, (version, digest))
    else:
        agent.pushes_refused += 1
        agent.fresh_refused += not stale


async def pause(seconds: float, stop_at: float) -> bool:
    """Sleep ``seconds``, or until ``stop_at`` (``time.monotonic``) if sooner; whether the loops go on. A plain
    sleep: anyio's ``move_on_after`` around an event wakes a task by cancelling it, an exception raised through
    it, which was a quarter of this client's CPU at 1,000 requests a second."""
    await asyncio.sleep(max(0.0, min(seconds, stop_at - time.monotonic())))
    return time.monotonic() < stop_at


async def run_agent(
    http: Connection, record: Record, agent: AgentSim, began: float, stop_at: float, pace: Pace
) -> None:
    rng = random.Random(agent.index)
    due = began + rng.uniform(0, pace.push_every)  # starts spread over the interval
    beat = began + rng.uniform(0, pace.heartbeat_every)
    while await pause(min(due, beat) - time.monotonic(), stop_at):
        if time.monotonic() >= beat:
            body = {"agent": agent_info(agent.index), "online": True}
            await record.call(http, "heartbeat", "POST", HEARTBEAT, json_body=body)
            beat = max(beat + rng.uniform(0.8, 1.2) * pace.heartbeat_every, time.monotonic())
        if time.monotonic() >= due:
            await push_once(http, record, agent, rng)
            due = max(due + rng.uniform(0.5, 1.5) * pace.push_every, time.monotonic())


async def run_chat(http: Connection, record: Record, chat: ChatSim, began: float, stop_at: float, pace: Pace) -> None:
    rng = random.Random(chat.id)
    url = f"/api/v1/chats/{chat.id}"
    going = await pause(began + rng.uniform(0, pace.turn_gap) - time.monotonic(), stop_at)
    while going:
        chat.turns += 1
        response = await record.call(http, "prompt", "GET", f"{url}/prompt")
        if response is not None:
            said = response.headers.get(b"x-prompt-cache", b"unknown").decode()
            record.cache[said] += 1
            if chat.prompted == chat.pinned:
                record.cache_same_pin[said] += 1
            chat.prompted = chat.pinned
            if b"<available-skills>" not in response.body:  # not parsed: this client's CPU is the servers' too
                record.fail("prompt", f"chat {chat.id}: no skills in the prompt")
        response = await record.call(
            http, "read_skill", "POST", f"{url}/tools/read_skill", json_body={"name": chat.skill}
        )
        if response is not None and response.json()["is_error"]:
            record.fail("read_skill", f"chat {chat.id}: {response.json()['content'][:200]}")
        if UPSTREAM and pace.mcp_calls:
            call = {"timezone": "UTC"}
            response = await record.call(http, "mcp_call", "POST", f"{url}/tools/{MCP_TOOL}", json_body=call)
            if response is not None and (response.json()["is_error"] or "UTC" not in response.json()["content"]):
                record.fail("mcp_call", f"chat {chat.id}: {response.json()['content'][:200]}")
        if chat.wanted and time.monotonic() - chat.last_refresh >= pace.refresh_gap:
            chat.wanted, chat.last_refresh = False, time.monotonic()
            response = await record.call(http, "refresh", "PUT", f"{url}/context")
            if response is not None:
                chat.refreshes += 1
                chat.pinned = response.json()["context"]["pinned_hash"]
        going = await pause(rng.uniform(0.5, 1.5) * pace.turn_gap, stop_at)


async def hold_events(base: str, record: Record, chat: ChatSim, token: str) -> None:
    """The chat's event stream, on a connection of its own, until cancelled; out_of_date asks for a refresh."""
    record.requests["events"] += 1
    start = time.perf_counter()
    http = Connection.to(base, {"Authorization": f"Bearer {token}"})
    try:
        async for kind, data in http.stream(f"/api/v1/chats/{chat.id}/events"):
            if not chat.connected:
                chat.connected = True
                record.latency["events"].append(time.perf_counter() - start)  # to the first event
            chat.events[kind] += 1
            if kind == "out_of_date":
                chat.out_of_date.add(json.loads(data)["pinned_hash"])
                chat.wanted = True
        record.fail("events", f"chat {chat.id}: the stream ended", transport=True)
    except StreamRefused as exc:
        record.fail("events", f"chat {chat.id}: {exc.status}")
    except TransportError as exc:
        record.fail("events", f"chat {chat.id}: {exc}", transport=True)


# --- measuring the server and the client -----------------------------------------------------


@dataclass
class Meter:
    pid: int
    rss: list[tuple[float, float]] = field(default_factory=list)  # seconds since start, MB
    cpu: list[tuple[float, float]] = field(default_factory=list)  # seconds since start, CPU seconds used
    lag: list[float] = field(default_factory=list)  # how late a 100 ms sleep of this client woke
    marked: list[float] = field(default_factory=list)  # CPU seconds when the loops began and ended

    def read(self, elapsed: float) -> None:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    self.rss.append((elapsed, int(line.split()[1]) / 1024))
            self.cpu.append((elapsed, cpu_seconds(self.pid)))

    def mark(self) -> None:
        with contextlib.suppress(OSError):
            self.marked.append(cpu_seconds(self.pid))

    async def run(self, start: float) -> None:
        tick = time.monotonic()
        while True:
            await anyio.sleep(0.1)
            now = time.monotonic()
            self.lag.append(now - tick - 0.1)
            tick = now
            if not self.rss or now - start - self.rss[-1][0] >= 1:
                self.read(now - start)


def _stat(pid: int | str) -> list[str]:
    """The fields of /proc/PID/stat after the command's name (field 3 of proc(5) is the first)."""
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()


def cpu_seconds(pid: int, *, reaped: bool = False) -> float:
    """CPU seconds ``pid`` used (user and system); ``reaped``: with its children's that it waited for."""
    fields = _stat(pid)
    ticks = int(fields[11]) + int(fields[12]) + (int(fields[13]) + int(fields[14]) if reaped else 0)
    return ticks / os.sysconf("SC_CLK_TCK")


SCANNED = ("contents", "chat_resources", "snapshot_resources", "chats", "agents", "tokens")


def table_scans(url: str) -> dict[str, tuple[int, int]]:
    """PostgreSQL's count of sequential scans of the larger tables and the rows they read, by table."""
    db = Database(url)
    try:
        with db.read() as s:
            found = s.execute(sa.text("SELECT relname, seq_scan, seq_tup_read FROM pg_stat_user_tables"))
            return {row.relname: (row.seq_scan, row.seq_tup_read) for row in found if row.relname in SCANNED}
    finally:
        db.dispose()


@dataclass
class DatabaseMeter:
    """The CPU of a PostgreSQL cluster: its postmaster, the children it reaped, the processes running now."""

    pid: int | None  # the postmaster's; None: SQLite (its work is the server's)

    def read(self) -> float:
        if self.pid is None:
            return 0.0
        total = cpu_seconds(self.pid, reaped=True)
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    if int(_stat(entry.name)[1]) == self.pid:
                        total += cpu_seconds(int(entry.name))
        return total


@dataclass
class MachineMeter:
    """The machine's CPUs, from the first line of ``/proc/stat`` each second: when a burst of slow requests
    comes, whether the CPUs were full, and whether the host of this virtual machine took them (``steal``)."""

    samples: list[tuple[float, tuple[int, ...]]] = field(default_factory=list)  # perf_counter, the line's counters

    def read(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            line = Path("/proc/stat").read_text().split("\n", 1)[0]
            self.samples.append((time.perf_counter(), tuple(int(n) for n in line.split()[1:])))

    async def run(self) -> None:
        while True:
            self.read()
            await anyio.sleep(1.0)


def machine_by_5s(
    samples: Sequence[tuple[float, Sequence[int]]], began: float, cpus: int
) -> dict[int, dict[str, float]]:
    """Each 5 s window after ``began`` (its start, in seconds): the CPUs' busy and stolen time as a percent of
    one CPU (``cpus`` full ones: ``100 * cpus``), from the ``/proc/stat`` samples that end in it. Idle and I/O
    wait are not busy; ``steal`` (time the host gave this machine's CPUs to someone else: not ours to use) is,
    and is also said apart."""
    sums: dict[int, list[int]] = {}
    for (_, before), (at, after) in zip(samples, samples[1:], strict=False):
        if at <= began:
            continue
        delta = [a - b for a, b in zip(after, before, strict=False)]
        total = sum(delta[:8])  # user nice system idle iowait irq softirq steal (guest time is within user)
        window = 5 * int((at - began) // 5)
        kept = sums.setdefault(window, [0, 0, 0])
        kept[0] += total
        kept[1] += total - delta[3] - delta[4]
        kept[2] += delta[7] if len(delta) > 7 else 0
    return {
        window: {"busy_percent": 100 * cpus * busy / total, "steal_percent": 100 * cpus * steal / total}
        for window, (total, busy, steal) in sorted(sums.items())
        if total
    }


def slope(points: Sequence[tuple[float, float]]) -> float:
    """Least-squares slope of ``points``, per minute."""
    if len(points) < 2:
        return 0.0
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    num = sum((x - mean_x) * (y - mean_y) for x, y in points)
    den = sum((x - mean_x) ** 2 for x, _ in points)
    return num / den * 60 if den else 0.0


# --- setting up, running, checking ---------------------------------------------------------------


SETUP_IN_FLIGHT = 4  # requests of the setup in flight for each server


async def setup(
    bases: Sequence[str], user_token: str, tokens: Sequence[str], chats: int, changes: str
) -> tuple[list[AgentSim], list[ChatSim]]:
    """Each agent's initial push, then the chats (pinned to it), round-robin over the workspaces and replicas."""
    agents = [AgentSim(i, token, static_resources(i), changes) for i, token in enumerate(tokens)]
    record = Record()
    made: list[ChatSim | None] = [None] * chats

    async def initial(http: Connection, agent: AgentSim) -> None:
        body, digest = push_body(agent.index, agent.fixed, 1, "", initial=True, changes=changes)
        auth = {"Authorization": f"Bearer {agent.token}"}
        response = await record.call(http, "push", "POST", PUSH, body, headers=auth)
        if response is None or not response.json()["accepted"]:
            raise RuntimeError(f"initial push of agent {agent.index} failed: {record.samples}")
        agent.version, agent.accepted = 1, (1, digest)

    async def create(http: Connection, n: int) -> None:
        agent = agents[n % len(agents)]
        new = {"workspace": f"ws-{agent.index:04d}", "title": f"load {n}"}
        auth = {"Authorization": f"Bearer {user_token}"}
        response = await record.call(http, "prompt", "POST", "/api/v1/chats", json_body=new, headers=auth)
        if response is None:
            raise RuntimeError(f"chat {n} could not be created: {record.samples}")
        pinned = response.json()["context"]["pinned_hash"]
        made[n] = ChatSim(response.json()["id"], agent.index, skill_name(agent.index, n % SKILLS), pinned)

    async def worker(replica: int, lane: int) -> None:  # the agents and chats of one server, one lane of them
        http = Connection.to(bases[replica], timeout=120)
        lanes = len(bases) * SETUP_IN_FLIGHT
        for agent in agents[replica + len(bases) * lane :: lanes]:
            await initial(http, agent)
        http.close()

    async def chat_worker(replica: int, lane: int) -> None:
        http = Connection.to(bases[replica], timeout=120)
        for n in range(replica + len(bases) * lane, chats, len(bases) * SETUP_IN_FLIGHT):
            await create(http, n)
        http.close()

    for each in (worker, chat_worker):  # every push before any chat: a chat pins its agent's snapshot
        async with anyio.create_task_group() as group:
            for replica in range(len(bases)):
                for lane in range(SETUP_IN_FLIGHT):
                    group.start_soon(each, replica, lane)
    return agents, [chat for chat in made if chat is not None]


@dataclass
class Outcome:
    agents: list[AgentSim]
    chats: list[ChatSim]
    record: Record
    meters: list[Meter]  # one a server
    machine: MachineMeter
    seconds: float
    client_cpu: float
    lag: list[float]  # how late a 100 ms sleep of this client woke
    loops_cpu: float  # this client's CPU seconds while the loops ran (``--seconds``)
    database_cpu: float | None  # the PostgreSQL cluster's CPU seconds then (None: SQLite, in the server)
    connections_opened: int  # by the agents and chats (not the streams): one each when the servers keep them
    pace: Pace
    table_scans: dict[str, tuple[int, int]]  # PostgreSQL: sequential scans of each table while the loops ran, rows


async def drive(
    bases: Sequence[str],
    pids: Sequence[int],
    user_token: str,
    tokens: Sequence[str],
    stream_tokens: Sequence[str],
    args: argparse.Namespace,
    db_pid: int | None,
    url: str,
) -> Outcome:
    agents, chats = await setup(bases, user_token, tokens, args.chats, args.changes)
    # This client's own pauses would count as the servers' latency: a full collection walking the setup's objects
    # (the workload's texts, the modules) took 180-200 ms here, just as the loops began. Set them aside, as the
    # server does once it serves (``gc.freeze``).
    gc.collect()
    gc.freeze()
    record, meters = Record(), [Meter(pid) for pid in pids]
    meter = meters[0]
    pace = PACES[args.pace]._replace(**{k: v for k, v in pace_options(args).items() if v is not None})
    user = {"Authorization": f"Bearer {user_token}"}
    # one keep-alive connection for each agent and chat, as each real one has, and one for each event stream
    agent_http = [
        Connection.to(bases[agent.index % len(bases)], {"Authorization": f"Bearer {agent.token}"}) for agent in agents
    ]
    chat_http = [Connection.to(bases[n % len(bases)], user) for n in range(len(chats))]
    database, machine = DatabaseMeter(db_pid), MachineMeter()
    start, cpu0 = time.monotonic(), time.process_time()
    async with anyio.create_task_group() as outer:
        for each in meters:
            outer.start_soon(each.run, start)
        outer.start_soon(machine.run)
        async with anyio.create_task_group() as streams:
            for n, chat in enumerate(chats):  # on the next replica: events cross from the one that made them
                token = stream_tokens[n // STREAMS_PER_TOKEN]  # the server caps open streams per token
                streams.start_soon(hold_events, bases[(n + 1) % len(bases)], record, chat, token)
                await anyio.sleep(pace.turn_gap / len(chats))  # opened over a turn's gap, as chats begin
            with anyio.move_on_after(STREAMS_WAIT):
                while not all(c.connected for c in chats):
                    await anyio.sleep(0.05)
            async with anyio.create_task_group() as loops:
                # Every loop's task is made first, each asleep until its start within the interval; the clock starts
                # once they are all made: making and first running 6,000 tasks holds this client's loop for ~170 ms,
                # and answers that came meanwhile were read late, counted as the servers' latency.
                began = time.monotonic() + START_MARGIN
                stop_at = began + args.seconds
                for agent in agents:
                    loops.start_soon(run_agent, agent_http[agent.index], record, agent, began, stop_at, pace)
                for n, chat in enumerate(chats):
                    loops.start_soon(run_chat, chat_http[n], record, chat, began, stop_at, pace)
                await anyio.sleep(max(0.0, began - time.monotonic()))
                record.began = time.perf_counter()
                print(f"{time.strftime('%H:%M:%S')} the loops begin", file=sys.stderr, flush=True)
                scans0 = table_scans(url) if db_pid is not None else {}
                busy0, cpu_loops = database.read(), time.process_time()
                for each in meters:
                    each.mark()
                await anyio.sleep(max(0.0, stop_at - time.monotonic()))  # each loop ends by then on its own
                database_cpu = None if db_pid is None else database.read() - busy0
                scans = {  # the statistics collector reports with a delay: a lower bound
                    name: (count - scans0[name][0], read - scans0[name][1])
                    for name, (count, read) in (table_scans(url) if db_pid is not None else {}).items()
                }
                loops_cpu = time.process_time() - cpu_loops
                for each in meters:
                    each.mark()
            await anyio.sleep(QUIET)
            streams.cancel_scope.cancel()
        for each in meters:
            each.read(time.monotonic() - start)
        outer.cancel_scope.cancel()
    for http in (*agent_http, *chat_http):
        http.close()
    opened = sum(http.opened for http in (*agent_http, *chat_http))
    return Outcome(
        agents, chats, record, meters, machine, time.monotonic() - start, time.process_time() - cpu0, meter.lag,
        loops_cpu, database_cpu, opened, pace, scans,
    )  # fmt: skip


def check(url: str, out: Outcome) -> dict[str, list[str]]:
    """What the database holds against what the server answered; every list must be empty."""
    found: dict[str, list[str]] = {k: [] for k in ("pushes", "snapshot rows", "dirty marks", "events", "pins")}
    db = Database(url)
    try:
        with db.read() as s:
            stored = {
                row.name: (row.agent_id, row.version, row.aggregate_hash)
                for row in s.execute(
                    sa.text(
                        "SELECT w.name, a.id AS agent_id, s.version, s.aggregate_hash FROM snapshots s"
                        " JOIN agents a ON a.id = s.agent_id JOIN workspaces w ON w.id = a.workspace_id"
                    )
                )
            }
            latest: dict[int, str] = {}
            for agent in out.agents:
                agent_id, version, digest = stored[f"ws-{agent.index:04d}"]
                latest[agent.index] = digest
                found["pushes"] += _check_push(agent, version, digest)
                rows_hash = aggregate_hash(rows.snapshot_resources(s, agent_id, with_content=False))
                if rows_hash != digest:
                    found["snapshot rows"].append(f"ws-{agent.index:04d}: rows hash {rows_hash[:12]} != {digest[:12]}")
            chat_rows = {
                row.id: (row.pinned_hash, row.dirty_since)
                for row in s.execute(sa.text("SELECT id, pinned_hash, dirty_since FROM chats"))
            }
            for chat in out.chats:
                pinned, dirty_since = chat_rows[chat.id]
                pin_rows = aggregate_hash(rows.chat_resources(s, chat.id, with_content=False))
                _check_chat(found, chat, pinned, dirty_since is not None, latest[chat.agent], pin_rows)
    finally:
        db.dispose()
    return found


def _check_push(agent: AgentSim, version: int, digest: str) -> list[str]:
    name = f"ws-{agent.index:04d}"
    problems = []
    if agent.stale_accepted or agent.fresh_refused:
        problems.append(f"{name}: {agent.stale_accepted} replays accepted, {agent.fresh_refused} new versions refused")
    last, last_hash = agent.accepted
    if version < last:
        problems.append(f"{name}: stored version {version} is older than the last accepted {last}")
    elif version == last and digest != last_hash:
        problems.append(f"{name}: version {version} stored with another hash")
    elif version > last and agent.unanswered.get(version) != digest:
        problems.append(f"{name}: stored version {version} was never pushed unanswered")
    return problems


def _check_chat(found: dict[str, list[str]], chat: ChatSim, pinned: str, dirty: bool, latest: str, rows: str) -> None:
    if rows != pinned:
        found["pins"].append(f"chat {chat.id}: pinned rows hash {rows[:12]} != pinned hash {pinned[:12]}")
    if pinned != chat.pinned and chat.events["lagged"] == 0:
        found["pins"].append(f"chat {chat.id}: pinned {pinned[:12]}, the last refresh answered {chat.pinned[:12]}")
    if (pinned != latest) != dirty:
        found["dirty marks"].append(f"chat {chat.id}: pinned {pinned[:12]}, latest {latest[:12]}, dirty={dirty}")
    if pinned != latest and pinned not in chat.out_of_date:
        said = "lagged" if chat.events["lagged"] else "no out_of_date for its pin"
        found["events"].append(f"chat {chat.id}: out of date, {said}")


# --- a run and its report ---------------------------------------------------------------------


STREAMS_PER_TOKEN = 8  # event streams held with one token (a user's tabs); the server allows 16


def user_tokens(url: str, count: int) -> list[str]:
    """``count`` more API tokens of the benchmark user: one for each few chats' event streams."""
    db = Database(url)
    try:
        return db.write(lambda s: [identity.create_token(s, "bench").token for _ in range(count)])
    finally:
        db.dispose()


def run(label: str, url: str, db_pid: int | None, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    print(f"{time.strftime('%H:%M:%S')} {label}: start, load average {os.getloadavg()}", file=sys.stderr, flush=True)
    load_start = os.getloadavg()
    user_token, tokens = populate(url, args.agents)
    stream_tokens = user_tokens(url, -(-args.chats // STREAMS_PER_TOKEN))
    replicas = args.replicas if args.postgres else 1
    mcp = PACES[args.pace].mcp_calls and not args.no_mcp
    with upstream_agent(tmp, enabled=mcp), servers(url, replicas, tmp, label) as (bases, logs, processes):
        pids = [p.pid for p in processes]
        outcome = anyio.run(
            drive,
            bases,
            pids,
            user_token,
            tokens,
            stream_tokens,
            args,
            db_pid,
            url,
            backend_options={"use_uvloop": True},
        )
        lost = check(url, outcome)
        errors = server_errors(logs)
    print(f"{time.strftime('%H:%M:%S')} {label}: done", file=sys.stderr, flush=True)
    return summarise(label, outcome, lost, errors, load_start, args)


def summarise(
    label: str,
    out: Outcome,
    lost: dict[str, list[str]],
    log_errors: list[str],
    load_start: tuple[float, float, float],
    args: argparse.Namespace,
) -> dict[str, Any]:
    r = out.record
    kinds = {
        kind: {
            "requests": r.requests[kind],
            "per_s": r.requests[kind] / args.seconds,
            "failed": r.failed[kind],
            "transport": r.transport[kind],
            "p50_ms": pct(r.latency[kind], 0.5) if r.latency[kind] else None,
            "p99_ms": pct(r.latency[kind], 0.99) if r.latency[kind] else None,
            "settled_p99_ms": pct(r.settled[kind], 0.99) if r.settled[kind] else None,
        }
        for kind in KINDS
    }
    total = sum(r.requests.values())
    bad = sum(r.failed.values()) + sum(r.transport.values())
    rss = [(t, sum(m.rss[i][1] for m in out.meters)) for i, (t, _) in enumerate(out.meters[0].rss)
           if all(len(m.rss) > i for m in out.meters)]  # fmt: skip
    end = rss[-1][0] if rss else 0.0
    at10 = next((mb for t, mb in rss if t >= 10), None)
    events: Counter[str] = Counter()
    for chat in out.chats:
        events.update(chat.events)
    return {
        "label": label,
        "agents": args.agents,
        "chats": args.chats,
        "seconds": args.seconds,
        "changes": args.changes,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "load_average_start": load_start,
        "load_average_end": os.getloadavg(),
        "kinds": kinds,
        "requests": total,
        "error_rate": bad / total if total else 0.0,
        "errors_said": r.samples,
        "pushes_accepted": sum(a.pushes_accepted for a in out.agents),
        "pushes_refused": sum(a.pushes_refused for a in out.agents),
        "refreshes": sum(c.refreshes for c in out.chats),
        "turns": sum(c.turns for c in out.chats),
        "events": dict(events),
        "rss_mb_start": rss[0][1] if rss else None,
        "rss_mb_10s": at10,
        "rss_mb_end": rss[-1][1] if rss else None,
        "rss_mb_max": max((mb for _, mb in rss), default=None),
        "rss_slope_last40_mb_per_min": slope([p for p in rss if p[0] >= end - 40]),
        "rss_series": rss,
        "replicas": len(out.meters),
        "server_cpu_percent": sum(_cpu_percent(m.cpu) for m in out.meters),
        "client_cpu_percent": 100 * out.client_cpu / out.seconds,
        "pace": args.pace,
        "pace_seconds": out.pace._asdict(),
        # while the loops ran: each server's, the database's and this client's share of a CPU
        "loops_server_cpu_percent": [
            100 * (m.marked[1] - m.marked[0]) / args.seconds for m in out.meters if len(m.marked) == 2
        ],
        "loops_database_cpu_percent": None if out.database_cpu is None else 100 * out.database_cpu / args.seconds,
        "loops_client_cpu_percent": 100 * out.loops_cpu / args.seconds,
        "client_cpu_us_per_request": 1e6 * out.loops_cpu / total if total else None,
        "server_cpu_ms_per_request": (
            sum(m.marked[1] - m.marked[0] for m in out.meters if len(m.marked) == 2) * 1000 / total if total else None
        ),
        "connections_opened": out.connections_opened,
        "connections_kept": len(out.agents) + len(out.chats),
        "table_scans": out.table_scans,
        "client_lag_p50_ms": pct(out.lag, 0.5),
        "client_lag_p99_ms": pct(out.lag, 0.99),
        "slow_by_5s": dict(sorted(Counter(5 * int((t - r.began) // 5) for t in r.slow).items())),
        "machine_cpu_by_5s": machine_by_5s(out.machine.samples, r.began, os.cpu_count() or 1),
        "prompt_cache": dict(r.cache),
        "prompt_cache_hit_rate": _rate(r.cache),
        "prompt_cache_same_pin": dict(r.cache_same_pin),
        "prompt_cache_same_pin_hit_rate": _rate(r.cache_same_pin),
        "prompt_cache_moved_pin": dict(r.cache - r.cache_same_pin),
        "prompt_cache_moved_pin_hit_rate": _rate(r.cache - r.cache_same_pin),
        "prompt_moved_pin_share": _share(r.cache - r.cache_same_pin, r.cache),
        "lost": {k: len(v) for k, v in lost.items()},
        "lost_said": {k: v[:5] for k, v in lost.items() if v},
        "server_log_errors": log_errors[:10],
    }


def _machine_said(machine: dict[int, dict[str, float]]) -> str:
    full = 100 * (os.cpu_count() or 1)
    said = ", ".join(
        f"{t}-{t + 5} s: {m['busy_percent']:.0f}%"
        + (f" ({m['steal_percent']:.0f}% stolen)" if m["steal_percent"] >= 1 else "")
        for t, m in machine.items()
    )
    return f"the machine's CPUs busy, of {full}%, by 5 s window: {said or 'not measured'}"


def _rate(said: Counter[str]) -> float | None:
    return said["hit"] / (said["hit"] + said["miss"]) if said["hit"] + said["miss"] else None


def _share(part: Counter[str], whole: Counter[str]) -> float | None:
    """The share of the prompts (hit or miss) that ``part`` holds."""
    total = whole["hit"] + whole["miss"]
    return (part["hit"] + part["miss"]) / total if total else None


def _cpu_percent(cpu: Sequence[tuple[float, float]]) -> float:
    return 100 * (cpu[-1][1] - cpu[0][1]) / (cpu[-1][0] - cpu[0][0]) if len(cpu) > 1 else 0.0


def report(results: Sequence[dict[str, Any]]) -> None:
    for r in results:
        where = f"{r['replicas']} servers" if r["replicas"] > 1 else "1 server"
        print(
            f"\n== {r['label']}: {r['agents']} agents, {r['chats']} chats, {r['seconds']} s, {where},"
            f" pushes: {r['changes']}; {r['machine']}"
        )
        print("load average at start " + ", ".join(f"{x:.2f}" for x in r["load_average_start"]))
        settled = f"p99 from {SETTLED_AFTER:.0f} s"
        print(
            f"{'kind':12} {'requests':>9} {'per s':>7} {'non-2xx':>8} {'transport':>9} {'p50 ms':>8} {'p99 ms':>8}"
            f" {settled:>13}"
        )
        for kind, k in r["kinds"].items():
            shown = (k["p50_ms"], k["p99_ms"], k["settled_p99_ms"])
            p50, p99, later = (f"{v:.1f}" if v is not None else "-" for v in shown)
            print(
                f"{kind:12} {k['requests']:>9} {k['per_s']:>7.1f} {k['failed']:>8} {k['transport']:>9}"
                f" {p50:>8} {p99:>8} {later:>13}"
            )
        print(f"error rate {r['error_rate']:.4%} of {r['requests']} requests")
        slow = r.get("slow_by_5s") or {}
        windows = ", ".join(f"{t}-{t + 5} s: {n}" for t, n in slow.items())
        print(f"requests over {P99_LIMIT_MS:.0f} ms, by when they started: {windows or 'none'}")
        print(_machine_said(r.get("machine_cpu_by_5s") or {}))
        print(f"pushes accepted {r['pushes_accepted']}, refused {r['pushes_refused']} (the replays)")
        print(f"chat turns {r['turns']}, refreshes {r['refreshes']}; events received {r['events']}")
        rate = r["prompt_cache_hit_rate"]
        said = f"{rate:.1%}" if rate is not None else "not reported by this server"
        print(f"prompts answered from the turn cache: {said} {r['prompt_cache']}")
        same = r.get("prompt_cache_same_pin_hit_rate")
        if same is not None:
            print(
                f"  of those whose pin had not moved since the chat's previous prompt: {same:.1%}"
                f" {r['prompt_cache_same_pin']}"
            )
        moved = r.get("prompt_cache_moved_pin_hit_rate")
        if moved is not None:
            print(
                f"  of those after a refresh moved the chat's pin (a hit: no shown text changed, or another chat"
                f" rendered it): {moved:.1%} {r['prompt_cache_moved_pin']}"
            )
        share = r.get("prompt_moved_pin_share")
        if share is not None and r["changes"] == ROOT_EVERY_PUSH:  # every re-pin: new text
            print(
                f"  a refresh had moved the pin before {share:.1%} of the prompts: no cache keyed by what a prompt"
                f" shows answers more than the other {1 - share:.1%}, and those of them another chat rendered"
            )
        elif share is not None:
            print(f"  a refresh had moved the pin before {share:.1%} of the prompts (pushes: {r['changes']})")
        print(
            f"server RSS MB: start {r['rss_mb_start']:.1f}, at 10 s {r['rss_mb_10s'] or 0:.1f}, end"
            f" {r['rss_mb_end']:.1f}, max {r['rss_mb_max']:.1f}; slope over the last 40 s"
            f" {r['rss_slope_last40_mb_per_min']:+.2f} MB/min"
        )
        print(
            f"server CPU {r['server_cpu_percent']:.0f}%; client CPU {r['client_cpu_percent']:.0f}%, event-loop lag"
            f" p50 {r['client_lag_p50_ms']:.1f} ms, p99 {r['client_lag_p99_ms']:.1f} ms"
        )
        servers_said, database = _cpu_said(r, ", ", "in the server")
        print(
            f"while the loops ran ({r['pace']} pace): servers' CPU {servers_said}% of a CPU each"
            f" ({r['server_cpu_ms_per_request'] or 0:.2f} ms a request), database {database}"
            f"{'' if r['loops_database_cpu_percent'] is None else '%'}, this client"
            f" {r['loops_client_cpu_percent']:.0f}% ({r['client_cpu_us_per_request'] or 0:.0f} us a request);"
            f" connections opened {r['connections_opened']} for {r['connections_kept']} agents and chats"
        )
        scans = ", ".join(f"{name} {n} ({rows} rows)" for name, (n, rows) in r["table_scans"].items() if n)
        if r["table_scans"]:
            print(f"sequential scans while the loops ran: {scans or 'none'}")
        print(f"saturated: {saturated(r) or 'nothing'}")
        print(
            f"held (p99 < {P99_LIMIT_MS:.0f} ms for every kind, nothing failed or lost): {_yes(held(r))};"
            f" from {SETTLED_AFTER:.0f} s on: {_yes(held(r, settled=True))}"
        )
        print("lost (each must be 0): " + ", ".join(f"{k} {v}" for k, v in r["lost"].items()))
        for name, said in r["lost_said"].items():
            for line in said:
                print(f"  {name}: {line}")
        for line in r["errors_said"][:10]:
            print(f"  error: {line}")
        for line in r["server_log_errors"]:
            print(f"  server log: {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=100)
    parser.add_argument("--chats", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument(
        "--pace",
        choices=tuple(PACES),
        default="stress",
        help="stress: each agent pushes every ~1 s and heartbeats every ~5 s, each chat takes a turn every ~1 s"
        " (with an MCP call); realistic: a heartbeat every ~15 s and a push a minute, a turn every ~10 s, a"
        " refresh at most every 30 s, no MCP calls",
    )
    parser.add_argument("--period", type=float, help="seconds between an agent's pushes (jittered; over --pace)")
    parser.add_argument("--turn-gap", type=float, help="a chat's pause between turns (jittered; over --pace)")
    parser.add_argument("--refresh-gap", type=float, help="at least this long between a chat's refreshes")
    parser.add_argument(
        "--changes",
        choices=(ROTATE, ROOT_EVERY_PUSH),
        default=ROTATE,
        help="what each push edits: one file in turn (the root AGENTS.md, the nested one, each skill's body),"
        " or the root AGENTS.md every time (each re-pin then changes the prompt)",
    )
    parser.add_argument("--postgres", action="store_true", help="on a throwaway PostgreSQL instead of SQLite")
    parser.add_argument("--replicas", type=int, default=1, help="with --postgres: servers on the one database")
    parser.add_argument(
        "--pg-socket", action="store_true", help="with --postgres: the servers reach it over its Unix socket, not TCP"
    )
    parser.add_argument("--no-mcp", action="store_true", help="no real agent: chats make no MCP tool calls")
    parser.add_argument(
        "--scale",
        action="store_true",
        help="run at each size of --stages, up to the first not held; say the largest held and what saturated",
    )
    parser.add_argument("--stages", default="5,10,15,20,25,30,40,50,70,100", help="agents a stage (two chats each)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    sizes = [int(n) for n in args.stages.split(",")] if args.scale else [args.agents]
    results = []
    for agents in sizes:
        if args.scale:
            args.agents, args.chats = agents, 2 * agents
        with tempfile.TemporaryDirectory(prefix="agentcontext-load-") as name, _database(args, Path(name)) as found:
            results.append(run(*found, args, Path(name)))
        if args.json:
            args.json.write_text(json.dumps(results if args.scale else results[0], indent=2, default=str) + "\n")
        report(results[-1:])
        if args.scale and not held(results[-1]):
            break
    if args.scale:
        report_scale(results)
    if any(any(r["lost"].values()) for r in results):
        sys.exit(1)


SATURATED = 85.0  # percent of a CPU: an event loop (each server's, this client's) at this is full
MACHINE_FULL = 180.0  # percent: the two CPUs of this machine, with what else runs


def held(r: dict[str, Any], *, settled: bool = False) -> bool:
    """Every request kind's p99 under the limit (``settled``: of the requests started ``SETTLED_AFTER`` s or more
    after the loops began), no request failed, nothing lost."""
    p99s = [r["kinds"][kind]["settled_p99_ms" if settled else "p99_ms"] for kind in KINDS]
    return all((v or 0) < P99_LIMIT_MS for v in p99s) and r["error_rate"] == 0 and not any(r["lost"].values())


def saturated(r: dict[str, Any]) -> str:
    """What was full while the loops ran: a server's event loop, the database, this client, the machine."""
    said = [f"server {n} ({c:.0f}% of a CPU)" for n, c in enumerate(r["loops_server_cpu_percent"]) if c >= SATURATED]
    database = r["loops_database_cpu_percent"] or 0.0
    if database >= SATURATED:
        said.append(f"the database ({database:.0f}%)")
    client = r["loops_client_cpu_percent"]
    if client >= SATURATED or r["client_lag_p99_ms"] >= 100:
        said.append(f"the load generator ({client:.0f}%, loop lag p99 {r['client_lag_p99_ms']:.0f} ms)")
    machine = sum(r["loops_server_cpu_percent"]) + database + client
    if machine >= MACHINE_FULL:
        said.append(f"the machine's CPUs ({machine:.0f}% of 200%)")
    return ", ".join(said)


def report_scale(results: Sequence[dict[str, Any]]) -> None:
    """Each stage's p99 by kind, where each kind first passes the limit, and whether the held size held."""
    print(f"\n== scale: p99 ms by kind and stage (limit {P99_LIMIT_MS:.0f} ms)")
    print(f"{'agents/chats':>13} {'req/s':>6} " + " ".join(f"{kind:>10}" for kind in KINDS) + "  lost  load")
    for r in results:
        p99 = [r["kinds"][kind]["p99_ms"] for kind in KINDS]
        cells = " ".join(f"{v:>10.0f}" if v is not None else f"{'-':>10}" for v in p99)
        lost = sum(r["lost"].values())
        print(f"{r['agents']:>6}/{r['chats']:<6} {r['requests'] / r['seconds']:>6.0f} {cells}  {lost:>4}"
              f"  {r['load_average_start'][0]:.1f}")  # fmt: skip
    for kind in KINDS:
        crossed = next((r for r in results if (r["kinds"][kind]["p99_ms"] or 0) >= P99_LIMIT_MS), None)
        where = f"{crossed['agents']} agents / {crossed['chats']} chats" if crossed else "never, up to the last stage"
        print(f"{kind:10} p99 first at or over {P99_LIMIT_MS:.0f} ms: {where}")
    kept = [r for r in results if held(r)]
    if kept:
        best = max(kept, key=lambda r: r["agents"])
        rate = best["requests"] / best["seconds"]
        print(f"largest size held (p99 < {P99_LIMIT_MS:.0f} ms for every kind, nothing failed or lost):"
              f" {best['agents']} agents / {best['chats']} chats, {rate:.0f} req/s")  # fmt: skip
    else:
        print("no size held")
    settled = [r for r in results if held(r, settled=True)]
    if settled:
        best = max(settled, key=lambda r: r["agents"])
        print(f"largest size held from {SETTLED_AFTER:.0f} s on (the requests started then):"
              f" {best['agents']} agents / {best['chats']} chats")  # fmt: skip
    broke = next((r for r in results if not held(r)), None)
    if broke is not None:
        print(f"first size not held: {broke['agents']} agents / {broke['chats']} chats; saturated:"
              f" {saturated(broke) or 'nothing at the thresholds'}")  # fmt: skip
    for r in results:
        servers_said, database = _cpu_said(r, "+", "-")
        print(
            f"  {r['agents']:>5}/{r['chats']:<5} CPU %: servers {servers_said}, database {database}, load generator"
            f" {r['loops_client_cpu_percent']:.0f} (lag p99 {r['client_lag_p99_ms']:.0f} ms)"
        )


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def _cpu_said(r: dict[str, Any], joined: str, no_database: str) -> tuple[str, str]:
    """Each server's and the database's share of a CPU (percent) while the loops ran, as text."""
    database = r["loops_database_cpu_percent"]
    servers = joined.join(f"{c:.0f}" for c in r["loops_server_cpu_percent"])
    return servers, no_database if database is None else f"{database:.0f}"


@contextlib.contextmanager
def upstream_agent(tmp: Path, *, enabled: bool) -> Iterator[None]:
    """A real ``agentcontext agent`` (no control plane) in front of ``mcp-server-time``; its address in UPSTREAM."""
    if not enabled:
        yield
        return
    work = tmp / "upstream"
    work.mkdir()
    command = str(Path(sys.executable).parent / "mcp-server-time")
    (work / ".mcp.json").write_text(json.dumps({"mcpServers": {"time": {"command": command}}}))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = (tmp / "upstream-agent.log").open("wb")
    args = [sys.executable, "-m", "agentcontext", "agent", "--work-dir", str(work), "--listen", f"127.0.0.1:{port}"]
    args += ["--mcp-trust", "auto"]  # mcp-server-time of this virtualenv: the operator vouches for it
    env = {**os.environ, "AGENTCONTEXT_AGENT_TOKEN": AGENT_TOKEN}  # not --token: `ps` would show it
    process = subprocess.Popen(args, stdout=log, stderr=log, env=env)
    try:
        deadline = time.monotonic() + 60
        headers = {"Authorization": f"Bearer {AGENT_TOKEN}"}
        while True:
            with contextlib.suppress(httpx.TransportError):
                tools = httpx.get(url + "/api/v0/mcp/tools", headers=headers, timeout=5).json()
                if any(tool.get("name") == MCP_TOOL for tool in tools.get("tools", [])):
                    break
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError(f"the upstream agent did not offer {MCP_TOOL}; see {log.name}")
            time.sleep(0.2)
        UPSTREAM.update(url=url, api_token=AGENT_TOKEN)
        yield
    finally:
        UPSTREAM.clear()
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


@contextlib.contextmanager
def _database(args: argparse.Namespace, tmp: Path) -> Iterator[tuple[str, str, int | None]]:
    """The run's label, its database's URL and the PostgreSQL postmaster's pid (None on SQLite)."""
    if not args.postgres:
        yield "load-sqlite", f"sqlite:///{tmp / 'control.db'}", None
        return
    with TempCluster.start() as cluster:
        postmaster = int((cluster.data / "postmaster.pid").read_text().split()[0])
        url = cluster.create_database("load")
        if args.pg_socket:
            yield "load-postgresql-socket", cluster.socket_url("load"), postmaster
        else:
            yield "load-postgresql", url, postmaster


if __name__ == "__main__":
    main()
