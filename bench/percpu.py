"""Server CPU per request, by type, against ``/healthz`` in the same run, on SQLite and PostgreSQL.

    .venv/bin/python bench/percpu.py [--count 400] [--rounds 3] [--only sqlite|postgresql] [--json PATH]
                                     [--py-spy BIN [--profile TYPE]]

One ``agentcontext server`` on loopback (a fresh SQLite file; a throwaway PostgreSQL cluster,
``TempCluster``), 5 agents (workspace ws-NNNN, agent "main") each with a first 10-resource push
and 2 chats, and a real ``agentcontext agent`` in front of the real ``mcp-server-time`` that
every simulated agent advertises (as ``bench/load.py`` sets them up). Then, ``--rounds`` times,
each request type is sent ``--count`` times from one client, sequentially, on one keep-alive
connection, in batches of 20 that alternate with 20 requests of the floor, and the server
process's CPU time (every thread, from its CPU clock, ``clock_getcpuclockid``) spent on each
is divided by the count; the ratio is the type's CPU over the floor's measured alongside it
(the shared machine's speed drifts; alternating keeps both on the same footing):

* ``healthz``: ``GET /healthz``, the floor (HTTP, uvicorn, FastAPI; no auth, no database);
* ``push``: a 10-resource snapshot whose root AGENTS.md changed (version up), round-robin over
  the agents, each with 2 chats pinned to it (the first push after their refresh marks them);
* ``heartbeat``: ``POST /agent/heartbeat``;
* ``prompt_hit``: ``GET /prompt`` of a chat already served since its pin last moved;
* ``prompt_miss``: the first ``GET /prompt`` of a chat created for it, its agent having pushed
  just before (created and pushed outside the count): content no chat rendered yet;
* ``prompt_shared``: the first ``GET /prompt`` of a chat created for it, pinned to content another
  chat of its agent just rendered (served from the renders chats share);
* ``read_skill``: ``POST /tools/read_skill`` of a pinned skill (served from the pin; the file
  listing asked of the agent);
* ``mcp_call``: ``POST /tools/time__get_current_time``, proxied to the real agent;
* ``refresh``: ``PUT /context`` (re-pin);
* ``sse``: open ``GET /events``, read its first event (``state``), close.

Reported per type: the median over rounds of the CPU microseconds a request, and the median
over rounds of its ratio to its floor. ``--py-spy BIN`` samples the server (``py-spy record``, GIL held) while
each type (or only ``--profile TYPE``) runs in the first round, and prints where the time
went, as ``bench/control.py --py-spy`` does (raw stacks in bench/out/).
What the PostgreSQL server itself spends is not in the figure (another
process). Goals (issue 13): push at most 6x the floor on SQLite and 10x on PostgreSQL, every
other chat request at most 5x.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: tests/pg_cluster.py

from tests.pg_cluster import TempCluster

from control import OUT, populate, sampled, server_errors, servers
from load import MCP_TOOL, UPSTREAM, push_body, skill_name, static_resources, upstream_agent

AGENTS = 5
CHATS_PER_AGENT = 2
TYPES = ("push", "heartbeat", "prompt_hit", "prompt_miss", "prompt_shared", "read_skill", "mcp_call", "refresh", "sse")
GOALS = {"push": {"sqlite": 6.0, "postgresql": 10.0}}
DEFAULT_GOAL = 5.0


class CpuClock:
    """Another process's CPU time (all its threads, live and ended), in seconds, from its CPU-time clock."""

    def __init__(self, pid: int) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        clock = ctypes.c_int()
        if libc.clock_getcpuclockid(pid, ctypes.byref(clock)) != 0:
            raise OSError(ctypes.get_errno(), f"no CPU clock for process {pid}")
        self.clock = clock.value

    def __call__(self) -> float:
        return time.clock_gettime(self.clock)


@dataclass
class World:
    base: str
    user: str
    agents: list[tuple[str, list[Any]]]  # (token, its fixed resources)
    versions: list[int]
    chats: list[tuple[str, int]]  # (chat id, agent index)
    errors: list[str] = field(default_factory=list)


def check(response: httpx.Response, what: str, world: World) -> httpx.Response:
    if not response.is_success and len(world.errors) < 20:
        world.errors.append(f"{what}: {response.status_code} {response.text[:200]}")
    return response


def setup(http: httpx.Client, base: str, user: str, tokens: list[str]) -> World:
    world = World(base, user, [(t, static_resources(i)) for i, t in enumerate(tokens)], [1] * len(tokens), [])
    for index, (token, fixed) in enumerate(world.agents):
        body, _ = push_body(index, fixed, 1, "", initial=True)
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        check(http.post(f"{base}/api/v1/agent/context", content=body, headers=headers), "first push", world)
    for n in range(len(tokens) * CHATS_PER_AGENT):
        index = n % len(tokens)
        world.chats.append((new_chat(http, world, index), index))
    return world


def new_chat(http: httpx.Client, world: World, index: int) -> str:
    response = http.post(f"{world.base}/api/v1/chats", json={"workspace": f"ws-{index:04d}"}, headers=_user(world))
    return str(check(response, "create chat", world).json()["id"])


def _user(world: World) -> dict[str, str]:
    return {"Authorization": f"Bearer {world.user}"}


# --- one request of each type ----------------------------------------------------------------


def healthz(http: httpx.Client, world: World, n: int) -> None:
    check(http.get(f"{world.base}/healthz"), "healthz", world)


def push(http: httpx.Client, world: World, n: int) -> None:
    index = n % len(world.agents)
    token, fixed = world.agents[index]
    world.versions[index] += 1
    body, _ = push_body(index, fixed, world.versions[index], "", initial=False)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    response = check(http.post(f"{world.base}/api/v1/agent/context", content=body, headers=headers), "push", world)
    if response.is_success and not response.json()["accepted"]:
        world.errors.append(f"push {n}: not accepted")


def heartbeat(http: httpx.Client, world: World, n: int) -> None:
    index = n % len(world.agents)
    body = {"agent": {"run_id": f"load-{index}", **UPSTREAM}, "online": True}
    headers = {"Authorization": f"Bearer {world.agents[index][0]}"}
    check(http.post(f"{world.base}/api/v1/agent/heartbeat", json=body, headers=headers), "heartbeat", world)


def prompt(http: httpx.Client, world: World, n: int, *, expected: str | None = None) -> None:
    """``expected``: the ``X-Prompt-Cache`` the prompt must be answered with (else an error is recorded)."""
    chat_id, _ = world.chats[n % len(world.chats)]
    response = check(http.get(f"{world.base}/api/v1/chats/{chat_id}/prompt", headers=_user(world)), "prompt", world)
    said = response.headers.get("x-prompt-cache")
    if expected is not None and said != expected and len(world.errors) < 20:
        world.errors.append(f"prompt {n}: X-Prompt-Cache {said}, not {expected}")


def read_skill(http: httpx.Client, world: World, n: int) -> None:
    chat_id, index = world.chats[n % len(world.chats)]
    url = f"{world.base}/api/v1/chats/{chat_id}/tools/read_skill"
    response = check(http.post(url, json={"name": skill_name(index, n % 8)}, headers=_user(world)), "read_skill", world)
    if response.is_success and response.json()["is_error"]:
        world.errors.append(f"read_skill: {response.json()['content'][:200]}")


def mcp_call(http: httpx.Client, world: World, n: int) -> None:
    chat_id, _ = world.chats[n % len(world.chats)]
    url = f"{world.base}/api/v1/chats/{chat_id}/tools/{MCP_TOOL}"
    response = check(http.post(url, json={"timezone": "UTC"}, headers=_user(world)), "mcp_call", world)
    if response.is_success and response.json()["is_error"]:
        world.errors.append(f"mcp_call: {response.json()['content'][:200]}")


def refresh(http: httpx.Client, world: World, n: int) -> None:
    chat_id, _ = world.chats[n % len(world.chats)]
    check(http.put(f"{world.base}/api/v1/chats/{chat_id}/context", headers=_user(world)), "refresh", world)


def sse(http: httpx.Client, world: World, n: int) -> None:
    chat_id, _ = world.chats[n % len(world.chats)]
    with http.stream("GET", f"{world.base}/api/v1/chats/{chat_id}/events", headers=_user(world)) as response:
        check(response, "sse", world)
        for line in response.iter_lines():
            if line.startswith("event:"):
                break


Request = Callable[[httpx.Client, World, int], None]


@dataclass
class Sampler:
    """``py-spy record`` of the server around one request type at a time (``--py-spy``): ``control.sampled``."""

    binary: str | None
    pid: int
    label: str
    only: str | None
    done: set[str] = field(default_factory=set)

    @contextlib.contextmanager
    def around(self, kind: str) -> Iterator[None]:
        if self.binary is None or kind in self.done or (self.only and kind != self.only):
            yield
            return
        self.done.add(kind)
        print(f"\n{self.label} {kind}:")
        with sampled(self.binary, self.pid, OUT / f"py-spy-percpu-{self.label}-{kind}.txt"):
            yield


BATCH = 20  # requests of a type, then as many of the floor, alternately: a drift of the machine hits both alike


def measure(
    clock: CpuClock, http: httpx.Client, world: World, request: Request, count: int, sampler: Sampler | None = None
) -> tuple[float, float]:
    """Server CPU microseconds a request of ``request`` and of the floor, over ``count`` each, in alternate batches."""
    spent = floor = 0.0
    with sampler.around(request.__name__) if sampler is not None else contextlib.nullcontext():
        for start in range(0, count, BATCH):
            batch = range(start, min(count, start + BATCH))
            before = clock()
            for n in batch:
                request(http, world, n)
            middle = clock()
            for n in batch:
                healthz(http, world, n)
            spent, floor = spent + middle - before, floor + clock() - middle
    return spent / count * 1e6, floor / count * 1e6


def prompt_hit(http: httpx.Client, world: World, n: int) -> None:
    prompt(http, world, n, expected="hit")


def prompt_miss(http: httpx.Client, world: World, n: int) -> None:
    prompt(http, world, n, expected="miss")


def prompt_shared(http: httpx.Client, world: World, n: int) -> None:
    prompt(http, world, n, expected="hit")


def fresh_chats(http: httpx.Client, world: World, count: int, *, pushed: bool) -> World:
    """``count`` new chats, round-robin over the agents; ``pushed``: each pinned after its agent pushed anew, else
    one per agent prompted (outside the count) so the others find their render shared."""
    fresh = World(world.base, world.user, world.agents, world.versions, [], world.errors)
    for n in range(count):
        if pushed:
            push(http, world, n)
        fresh.chats.append((new_chat(http, world, n % len(world.agents)), n % len(world.agents)))
    if not pushed:
        first = World(world.base, world.user, world.agents, world.versions, [], world.errors)
        first.chats = [(new_chat(http, world, index), index) for index in range(len(world.agents))]
        for n in range(len(first.chats)):
            prompt(http, first, n)
    return fresh


def one_round(
    clock: CpuClock, http: httpx.Client, world: World, count: int, sampler: Sampler | None
) -> dict[str, tuple[float, float]]:
    """Each type's CPU a request, with the floor measured alongside it: (type, floor)."""
    out = {"push": measure(clock, http, world, push, count, sampler)}
    out["heartbeat"] = measure(clock, http, world, heartbeat, count, sampler)
    for n in range(len(world.chats)):  # each chat served once since the pushes moved its agent's snapshot
        prompt(http, world, n)
    out["prompt_hit"] = measure(clock, http, world, prompt_hit, count, sampler)
    out["prompt_miss"] = measure(clock, http, fresh_chats(http, world, count, pushed=True), prompt_miss, count, sampler)
    shared = fresh_chats(http, world, count, pushed=False)
    out["prompt_shared"] = measure(clock, http, shared, prompt_shared, count, sampler)
    out["read_skill"] = measure(clock, http, world, read_skill, count, sampler)
    out["mcp_call"] = measure(clock, http, world, mcp_call, count, sampler)
    out["refresh"] = measure(clock, http, world, refresh, count, sampler)
    out["sse"] = measure(clock, http, world, sse, max(BATCH, count // 2), sampler)
    return out


def run(label: str, url: str, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    load_start = os.getloadavg()
    print(f"{time.strftime('%H:%M:%S')} {label}: start, load average {load_start}", file=sys.stderr, flush=True)
    user, tokens = populate(url, AGENTS)
    rounds: list[dict[str, tuple[float, float]]] = []
    tmp = tmp / label
    tmp.mkdir()
    with upstream_agent(tmp, enabled=True), servers(url, 1, tmp, label) as (bases, logs, processes):
        clock = CpuClock(processes[0].pid)
        sampler = Sampler(args.py_spy, processes[0].pid, label, args.profile)
        with httpx.Client(timeout=60) as http:
            world = setup(http, bases[0], user, tokens)
            for number in range(args.rounds):
                rounds.append(one_round(clock, http, world, args.count, sampler if number == 0 else None))
                print(f"{time.strftime('%H:%M:%S')} {label}: round {number + 1} done", file=sys.stderr, flush=True)
        errors = world.errors + server_errors(logs)
    floors = [r[kind][1] for r in rounds for kind in TYPES]
    floor = statistics.median(floors)
    per_type = {kind: statistics.median(r[kind][0] for r in rounds) for kind in TYPES}
    ratios = {kind: statistics.median(r[kind][0] / r[kind][1] for r in rounds) for kind in TYPES}
    dialect = "sqlite" if label.startswith("sqlite") else "postgresql"
    return {
        "label": label,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "load_average_start": load_start,
        "load_average_end": os.getloadavg(),
        "count": args.count,
        "rounds": rounds,
        "floor_us": floor,
        "floor_spread_us": (min(floors), max(floors)),
        "per_request_us": per_type,
        "ratio": ratios,  # each round's type against the floor measured alongside it; the median
        "goal": {kind: GOALS.get(kind, {}).get(dialect, DEFAULT_GOAL) for kind in TYPES},
        "errors": errors,
    }


def report(results: list[dict[str, Any]]) -> None:
    for r in results:
        print(f"\n== {r['label']}: {r['count']} requests a type, {len(r['rounds'])} rounds; {r['machine']}")
        print("load average at start " + ", ".join(f"{x:.2f}" for x in r["load_average_start"]))
        low, high = r["floor_spread_us"]
        print(f"floor /healthz: {r['floor_us']:.0f} us CPU a request (rounds {low:.0f} to {high:.0f})")
        print(f"{'type':12} {'us CPU':>8} {'x floor':>8} {'goal':>6}  rounds (x their floor)")
        for kind in TYPES:
            ratio, goal = r["ratio"][kind], r["goal"][kind]
            each = " ".join(f"{x[kind][0] / x[kind][1]:.1f}x" for x in r["rounds"])
            mark = "met" if ratio <= goal else "NOT MET"
            print(f"{kind:12} {r['per_request_us'][kind]:>8.0f} {ratio:>7.1f}x {goal:>5.0f}x  {each}  {mark}")
        for error in r["errors"][:10]:
            print(f"  error: {error}")


@contextlib.contextmanager
def databases(wanted: list[str], tmp: Path) -> Iterator[list[tuple[str, str]]]:
    found = []
    if "sqlite" in wanted:
        found.append(("sqlite", f"sqlite:///{tmp / 'control.db'}"))
    if "postgresql" not in wanted:
        yield found
        return
    with TempCluster.start() as cluster:
        yield [*found, ("postgresql", cluster.create_database("percpu"))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=400, help="requests of each type a round (healthz: twice that)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", choices=["sqlite", "postgresql"], action="append")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--py-spy", metavar="BIN", help="py-spy binary: sample the server while each type runs")
    parser.add_argument("--profile", choices=["healthz", *TYPES], help="with --py-spy: only this type")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    results: list[dict[str, Any]] = []
    with (
        tempfile.TemporaryDirectory(prefix="agentcontext-percpu-") as name,
        databases(args.only or ["sqlite", "postgresql"], Path(name)) as found,
    ):
        for label, url in found:
            results.append(run(label, url, args, Path(name)))
            if args.json:
                args.json.write_text(json.dumps(results, indent=2, default=str) + "\n")
    report(results)


if __name__ == "__main__":
    main()
