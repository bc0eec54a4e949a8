"""Control plane benchmark: push deduplication and latency, prompt latency, on SQLite and PostgreSQL.

    .venv/bin/python bench/control.py [--agents 1000] [--chats 100] [--prompts 2000] [--skip-postgres] [--profile]
                                      [--py-spy BIN]

Each run starts ``agentcontext server`` (one or two replicas) on a fresh database and:

* creates N agents (one workspace each) and a user directly in the database, then pushes one
  100-resource snapshot per agent over HTTP, 8 in flight, timing each push
  (``POST /api/v1/agent/context``). A snapshot holds 4 instruction files (1-4 KiB, unique to the
  workspace) and 96 skills (SKILL.md of 2-8 KiB): 77 drawn from an organisation-wide pool of 120
  (their content identical wherever they appear) and 19 of the workspace's own, so about 80% of
  the skill content is shared. Bodies are built once, before any server starts, and reused by
  every run;
* reports what the database stores (``contents``: each text once, by hash) against the content
  bytes pushed (the deduplication ratio), and the growth of the whole database against the JSON
  bodies pushed;
* creates M chats (one per workspace, spread over the replicas) and times P sequential
  ``GET /api/v1/chats/{id}/prompt`` after one warm-up round, each followed by a ``GET /healthz``
  on the same server and connection (the floor: HTTP, uvicorn, no auth, no database), then 500
  of each with 8 in flight (``--concurrent``); goal: prompt p50 under 2 ms on SQLite;
* times, in this process and on the same database, the stages of building one prompt (token
  lookup, the turn-key query, loading the pinned rows and their instruction texts, rendering,
  JSON: the path of a prompt not served before), so the
  HTTP figure can be read against them; ``--profile`` adds a cProfile of those stages, and
  ``--py-spy BIN`` samples the first server during the sequential prompts (raw stacks kept in
  bench/out/py-spy-RUN.txt).

Runs: sqlite-1, postgresql-1, postgresql-2 (two servers on one database, requests alternating
between them). SQLite serves one replica only: its events are in-process. PostgreSQL is a
throwaway cluster from the installed binaries (``TempCluster``).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import hashlib
import io
import json
import os
import platform
import pstats
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: tests/pg_cluster.py

from tests.pg_cluster import TempCluster

from agentcontext.control import identity, prompt, rows
from agentcontext.control.db import Database
from agentcontext.control.service import prepare
from agentcontext.resource import Kind, Resource, Scope, Status
from agentcontext.snapshot import Snapshot, aggregate_hash

SKILLS = 96
SHARED_SKILLS = 77  # of the 96: 80% of the skills, so about 80% of the skill bytes
POOL = 120  # organisation-wide skills the shared ones are drawn from
PUSH_PATH = "/api/v1/agent/context"
OUT = Path(__file__).resolve().parent / "out"
IDLE = ("Condition.wait", "Queue.get", "select (selectors", "_run_once (asyncio", "Runner.run (asyncio", "sleep (")
PROSE = (
    "run the tests before you commit; use make lint and fix every warning it reports. the service reads its"
    " config from env vars, never from files in the repo. prefer small pull requests with one change each."
    " database migrations go through alembic and must be reversible. log with structured fields, not f-strings."
    " when a request fails, return the error code from the api spec and keep internal details out of the"
    " message. deploy with the pipeline, never by hand; roll back with the previous tag. write a test for the"
    " bug first, then the fix. keep functions short, names plain, and comments about why, not what."
)
WORDS = PROSE.split()


# --- the snapshots ----------------------------------------------------------------------


def corpus(rng: random.Random, size: int = 1 << 20) -> str:
    """About ``size`` characters of markdown-like prose to cut skill and instruction bodies from."""
    lines: list[str] = []
    total = 0
    while total < size:
        roll = rng.random()
        if roll < 0.06:
            line = f"## Step {rng.randint(1, 12)}: {' '.join(rng.choices(WORDS, k=4))}"
        elif roll < 0.4:
            line = "- " + " ".join(rng.choices(WORDS, k=rng.randint(6, 16)))
        else:
            line = " ".join(rng.choices(WORDS, k=rng.randint(10, 22)))
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class Text:
    name: str
    description: str
    body: str


def cut(rng: random.Random, prose: str, low: int, high: int) -> str:
    size = rng.randint(low, high)
    start = rng.randrange(0, len(prose) - size)
    return prose[start : start + size]


def skill_text(rng: random.Random, prose: str, name: str) -> Text:
    description = " ".join(rng.choices(WORDS, k=rng.randint(10, 24)))
    header = f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\n"
    return Text(name, description, header + cut(rng, prose, 2048 - len(header), 8192 - len(header)))


def resource(kind: Kind, path: str, scope: Scope, text: str, **extra: Any) -> Resource:
    data = text.encode("utf-8")
    return Resource(kind, path, scope, Status.OK, len(data), hashlib.sha256(data).hexdigest(), text, None, (), **extra)


def snapshot(index: int, pool: Sequence[Text], prose: str) -> Snapshot:
    """Agent ``index``'s snapshot: 4 instruction files, 77 pool skills, 19 skills of its own."""
    rng = random.Random(index)
    root = f"/home/coder/ws-{index:04d}"
    work = f"{root}/services/api"
    resources: list[Resource] = []
    for level, folder in enumerate((root, f"{root}/services", work, work)):
        name = "AGENTS.override.md" if level == 3 else "AGENTS.md"
        text = f"# ws-{index:04d} level {level}\n\n" + cut(rng, prose, 1024, 4096)
        resources.append(resource(Kind.INSTRUCTION_FILE, f"{folder}/{name}", Scope.PROJECT, text, doc_order=level))
    own = [skill_text(rng, prose, f"ws{index:04d}-tool-{n:02d}") for n in range(SKILLS - SHARED_SKILLS)]
    for skill in [*rng.sample(list(pool), SHARED_SKILLS), *own]:
        path = f"{root}/.agents/skills/{skill.name}/SKILL.md"
        extra = {"name": skill.name, "description": skill.description}
        resources.append(resource(Kind.SKILL, path, Scope.REPO, skill.body, **extra))
    ordered = tuple(sorted(resources, key=lambda r: r.id))
    return Snapshot(
        version=1,
        aggregate_hash=aggregate_hash(ordered),
        work_dir=work,
        project_root=root,
        profile="default",
        resources=ordered,
        payload_bytes=sum(r.payload_bytes for r in ordered),
    )


@dataclass
class Workload:
    bodies: list[bytes]  # the JSON push bodies
    content_bytes: int  # the resources' content bytes, summed over every push
    shared_skill_bytes: int
    skill_bytes: int
    distinct_bytes: int  # what a perfect store keeps: each distinct text once
    first_instruction: list[str] = field(default_factory=list)  # a line to find in each agent's prompt


def workload(agents: int) -> Workload:
    rng = random.Random(20261129)
    prose = corpus(rng)
    pool = [skill_text(rng, prose, f"org-skill-{n:03d}") for n in range(POOL)]
    pool_bodies = {t.body for t in pool}
    out = Workload([], 0, 0, 0, 0)
    distinct: dict[str, int] = {}
    for index in range(agents):
        snap = snapshot(index, pool, prose)
        out.bodies.append(json.dumps({**snap.to_dict(), "initial": True}, ensure_ascii=False).encode("utf-8"))
        out.content_bytes += snap.payload_bytes
        for r in snap.resources:
            text = r.content or ""
            distinct[hashlib.sha256(text.encode()).hexdigest()] = r.size_bytes
            if r.kind is Kind.SKILL:
                out.skill_bytes += r.size_bytes
                out.shared_skill_bytes += r.size_bytes if text in pool_bodies else 0
        out.first_instruction.append(f"# ws-{index:04d} level 0")
    out.distinct_bytes = sum(distinct.values())
    return out


# --- servers and databases ----------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_ready(base: str, process: subprocess.Popen[bytes], log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}: {log.read_text(errors='replace')[-2000:]}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{base} never answered /healthz")


@contextlib.contextmanager
def servers(
    url: str, replicas: int, tmp: Path, label: str
) -> Iterator[tuple[list[str], list[Path], list[subprocess.Popen[bytes]]]]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(home)}
    env.pop("AGENTCONTEXT_DB", None)
    processes: list[subprocess.Popen[bytes]] = []
    bases: list[str] = []
    logs: list[Path] = []
    try:
        for replica in range(replicas):
            port = free_port()
            log = OUT / f"server-{label}-{replica}.log"
            command = [sys.executable, "-m", "agentcontext", "server", "--db", url, "--listen", f"127.0.0.1:{port}"]
            processes.append(subprocess.Popen(command, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT))
            bases.append(f"http://127.0.0.1:{port}")
            logs.append(log)
            wait_ready(bases[-1], processes[-1], log)
        yield bases, logs, processes
        for log, process in zip(logs, processes, strict=True):
            if process.poll() is not None:
                with log.open("a") as file:
                    file.write(f"ERROR bench: the server exited with {process.returncode} during the run\n")
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)


def populate(url: str, agents: int) -> tuple[str, list[str]]:
    """Migrate, then create the benchmark user and N agents (workspace ws-NNNN, agent "main")."""
    db, _admin = prepare(url)
    try:
        user = db.write(lambda s: identity.create_user(s, "bench"))

        def work(session: Any) -> list[str]:
            return [identity.create_agent(session, f"ws-{i:04d}", "main").token for i in range(agents)]

        return user.token, db.write(work)
    finally:
        db.dispose()


def storage(url: str) -> dict[str, float]:
    """Stored contents, row counts and the database's size, as the database reports them."""
    db = Database(url)
    try:
        with db.read() as s:
            figures: dict[str, float] = {}
            count, stored = s.execute(sa.text("SELECT COUNT(*), COALESCE(SUM(size_bytes), 0) FROM contents")).one()
            figures["contents"] = int(count)
            figures["contents_bytes"] = int(stored)  # PostgreSQL's SUM gives a Decimal
            figures["snapshot_rows"] = s.scalar(sa.text("SELECT COUNT(*) FROM snapshot_resources")) or 0
            figures["chat_rows"] = s.scalar(sa.text("SELECT COUNT(*) FROM chat_resources")) or 0
            if db.is_sqlite:
                pages = s.scalar(sa.text("PRAGMA page_count")) or 0
                free = s.scalar(sa.text("PRAGMA freelist_count")) or 0
                size = s.scalar(sa.text("PRAGMA page_size")) or 0
                figures["db_bytes"] = (pages - free) * size
                with contextlib.suppress(sa.exc.DBAPIError):  # dbstat is compiled in on most builds
                    for name, used in s.execute(sa.text("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name")):
                        if name in ("contents", "snapshot_resources", "chat_resources"):
                            figures[f"table_{name}"] = used
            else:
                figures["db_bytes"] = int(s.scalar(sa.text("SELECT pg_database_size(current_database())")) or 0)
                for name in ("contents", "snapshot_resources", "chat_resources"):
                    figures[f"table_{name}"] = int(s.scalar(sa.text(f"SELECT pg_total_relation_size('{name}')")) or 0)
            return figures
    finally:
        db.dispose()


# --- the measurements ---------------------------------------------------------------------


def pct(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000


async def push_all(
    bases: Sequence[str], tokens: Sequence[str], bodies: Sequence[bytes], concurrency: int
) -> tuple[list[float], float, list[str]]:
    latencies: list[float] = []
    errors: list[str] = []
    limiter = anyio.Semaphore(concurrency)
    # No more connections than requests in flight: a spare one left idle past uvicorn's 5 s keep-alive
    # gets closed by the server just as the client reuses it (httpx.ReadError, seen once in 1,000 pushes).
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=300, limits=limits) as http:

        async def one(i: int) -> None:
            headers = {"Authorization": f"Bearer {tokens[i]}", "Content-Type": "application/json"}
            async with limiter:
                start = time.perf_counter()
                try:
                    response = await http.post(bases[i % len(bases)] + PUSH_PATH, content=bodies[i], headers=headers)
                except httpx.HTTPError as exc:
                    errors.append(f"push {i} to {bases[i % len(bases)]}: {type(exc).__name__} {exc}")
                    return
                latencies.append(time.perf_counter() - start)
            if response.status_code != 200 or not response.json().get("accepted"):
                errors.append(f"push {i}: {response.status_code} {response.text[:300]}")

        start = time.perf_counter()
        async with anyio.create_task_group() as group:
            for i in range(len(bodies)):
                group.start_soon(one, i)
        elapsed = time.perf_counter() - start
    return latencies, elapsed, errors


def create_chats(bases: Sequence[str], token: str, count: int) -> tuple[list[str], list[str]]:
    ids: list[str] = []
    errors: list[str] = []
    with httpx.Client(timeout=60, headers={"Authorization": f"Bearer {token}"}) as http:
        for i in range(count):
            response = http.post(f"{bases[i % len(bases)]}/api/v1/chats", json={"workspace": f"ws-{i:04d}"})
            if response.status_code not in (200, 201) or not response.json()["context"]["pinned_hash"]:
                errors.append(f"chat {i}: {response.status_code} {response.text[:300]}")
                continue
            ids.append(response.json()["id"])
    return ids, errors


@dataclass
class Sequential:
    prompt: list[float]
    floor: list[float]
    prompt_bytes: int
    errors: list[str]


def sequential(
    bases: Sequence[str], token: str, chat_ids: Sequence[str], calls: int, marks: Sequence[str]
) -> Sequential:
    """Prompt then /healthz on the same server and connection, alternately; one warm-up round first."""
    out = Sequential([], [], 0, [])
    warmup = len(chat_ids)
    with httpx.Client(timeout=60, headers={"Authorization": f"Bearer {token}"}) as http:
        for i in range(warmup + calls):
            base, chat = bases[i % len(bases)], chat_ids[i % len(chat_ids)]
            start = time.perf_counter()
            response = http.get(f"{base}/api/v1/chats/{chat}/prompt")
            middle = time.perf_counter()
            floor = http.get(f"{base}/healthz")
            end = time.perf_counter()
            if response.status_code != 200 or floor.status_code != 200:
                out.errors.append(f"prompt {i}: {response.status_code} {response.text[:300]} / {floor.status_code}")
                continue
            if i < warmup:  # check what the prompt says once per chat
                body = response.json()
                if marks[i % len(chat_ids)] not in body["system"] or not body["tools"]:
                    out.errors.append(f"prompt of chat {i}: the pinned instruction file or the tools are missing")
                out.prompt_bytes = len(response.content)
                continue
            out.prompt.append(middle - start)
            out.floor.append(end - middle)
    return out


async def throughput(bases: Sequence[str], token: str, paths: Sequence[str], concurrency: int) -> float:
    """Requests per second over ``paths`` (spread over the servers), ``concurrency`` in flight."""
    limiter = anyio.Semaphore(concurrency)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    failures = 0
    async with httpx.AsyncClient(timeout=60, limits=limits, headers={"Authorization": f"Bearer {token}"}) as http:

        async def one(i: int) -> None:
            nonlocal failures
            async with limiter:
                response = await http.get(bases[i % len(bases)] + paths[i])
            failures += response.status_code != 200

        start = time.perf_counter()
        async with anyio.create_task_group() as group:
            for i in range(len(paths)):
                group.start_soon(one, i)
        elapsed = time.perf_counter() - start
    if failures:
        raise RuntimeError(f"{failures} of {len(paths)} requests failed")
    return len(paths) / elapsed


def one_prompt(db: Database, token: str, chat_id: str) -> list[float]:
    """The steps of GET /prompt, one after the other in this thread: perf_counter marks between them."""
    from agentcontext.control.turns import load_context, turn_row  # here: the other benches import this module

    marks = [time.perf_counter()]
    user = db.read_rows(lambda c: identity.authenticate(c, token))
    marks.append(time.perf_counter())
    assert isinstance(user, identity.UserPrincipal)
    row = db.read_rows(lambda c: turn_row(c, user, chat_id))
    marks.append(time.perf_counter())
    context = db.read_rows(lambda c: load_context(c, user, row, texts=True))
    marks.append(time.perf_counter())
    turn = prompt.build(context)
    marks.append(time.perf_counter())
    json.dumps(turn.to_dict(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    marks.append(time.perf_counter())
    return marks


STEPS = ("token lookup", "turn key", "load pin", "render", "json")


def stages(url: str, token: str, chat_ids: Sequence[str], rounds: int, profile: bool) -> dict[str, float]:
    """Median ms of each step of one prompt, run here in one thread on the same database."""
    db = Database(url)
    samples: dict[str, list[float]] = {name: [] for name in STEPS}
    try:
        for chat_id in chat_ids:  # warm-up round
            one_prompt(db, token, chat_id)
        for i in range(rounds):
            marks = one_prompt(db, token, chat_ids[i % len(chat_ids)])
            for n, name in enumerate(STEPS):
                samples[name].append(marks[n + 1] - marks[n])
        if profile:
            profiler = cProfile.Profile()
            profiler.enable()
            for i in range(rounds):
                one_prompt(db, token, chat_ids[i % len(chat_ids)])
            profiler.disable()
            text = io.StringIO()
            pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(30)
            print(f"cProfile of {rounds} in-process prompt builds ({db.dialect}):\n{text.getvalue()}")
        with db.read() as s:  # how much a pin weighs: the content a prompt not served before reads
            pinned = rows.chat_resources(s, chat_ids[0], with_content=("instruction_file",))
    finally:
        db.dispose()
    out = {name: statistics.median(values) * 1000 for name, values in samples.items()}
    out["pinned content read KiB"] = sum(len((r.content or "").encode()) for r in pinned) / 1024
    return out


@contextlib.contextmanager
def sampled(py_spy: str | None, pid: int, out: Path) -> Iterator[None]:
    """With ``--py-spy``, sample the first server while the block runs and print where its time went."""
    if py_spy is None:
        yield
        return
    command = [py_spy, "record", "--pid", str(pid), "--rate", "250", "--format", "raw", "--gil"]  # CPU, not waits
    recorder = subprocess.Popen([*command, "--output", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(1)
    try:
        yield
    finally:
        recorder.send_signal(signal.SIGINT)
        recorder.wait(60)
    inclusive: dict[str, int] = {}
    leaves: dict[str, int] = {}
    total = 0
    for line in out.read_text().splitlines():
        stack, _, weight = line.rpartition(" ")
        frames = stack.split(";")
        if any(mark in frames[-1] for mark in IDLE):
            continue
        total += int(weight)
        leaves[frames[-1]] = leaves.get(frames[-1], 0) + int(weight)
        for frame in {f.rpartition(":")[0] + ")" for f in frames}:  # by function, whatever the line
            if "agentcontext/" in frame or "sqlalchemy/" in frame or "json" in frame or "httptools" in frame:
                inclusive[frame] = inclusive.get(frame, 0) + int(weight)
    print(f"py-spy {out}: {total} busy samples of the first server; our, SQLAlchemy and JSON frames, inclusive:")
    for frame, samples in sorted(inclusive.items(), key=lambda kv: -kv[1])[:35]:
        print(f"  {samples / max(1, total):6.1%}  {frame[:150]}")
    print("leaf frames (self time):")
    for frame, samples in sorted(leaves.items(), key=lambda kv: -kv[1])[:15]:
        print(f"  {samples / max(1, total):6.1%}  {frame[:150]}")


def server_errors(logs: Sequence[Path]) -> list[str]:
    found = []
    for log in logs:
        lines = log.read_text(errors="replace").splitlines()
        for n, line in enumerate(lines):
            if "Traceback" in line or " ERROR" in line or line.startswith(("ERROR", "CRITICAL")):
                found.append(f"{log.name}: " + " | ".join(lines[n : n + 3])[:400])
    return found


# --- a run --------------------------------------------------------------------------------


def run(label: str, url: str, replicas: int, load: Workload, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    started = time.perf_counter()
    print(f"{time.strftime('%H:%M:%S')} {label}: start", file=sys.stderr, flush=True)
    user_token, agent_tokens = populate(url, args.agents)
    empty = storage(url)
    with servers(url, replicas, tmp, label) as (bases, logs, processes):
        latencies, elapsed, push_errors = anyio.run(push_all, bases, agent_tokens, load.bodies, args.push_concurrency)
        print(f"{time.strftime('%H:%M:%S')} {label}: pushed in {elapsed:.0f} s", file=sys.stderr, flush=True)
        stored = storage(url)
        chat_ids, chat_errors = create_chats(bases, user_token, min(args.chats, args.agents))
        if not chat_ids:
            raise RuntimeError(f"{label}: no chat could be created: {chat_errors[:3]}")
        with sampled(args.py_spy, processes[0].pid, OUT / f"py-spy-{label}.txt"):
            seq = sequential(bases, user_token, chat_ids, args.prompts, load.first_instruction)
        prompt_paths = [f"/api/v1/chats/{chat_ids[i % len(chat_ids)]}/prompt" for i in range(args.concurrent)]
        prompt_rps = anyio.run(throughput, bases, user_token, prompt_paths, 8)
        floor_rps = anyio.run(throughput, bases, user_token, ["/healthz"] * args.concurrent, 8)
        steps = stages(url, user_token, chat_ids, args.stage_rounds, args.profile)
        errors = push_errors + chat_errors + seq.errors + server_errors(logs)
    print(f"{time.strftime('%H:%M:%S')} {label}: done, {len(errors)} errors", file=sys.stderr, flush=True)
    body_bytes = sum(len(b) for b in load.bodies)
    grown = stored["db_bytes"] - empty["db_bytes"]
    return {
        "label": label,
        "replicas": replicas,
        "seconds": time.perf_counter() - started,
        "push_p50_ms": pct(latencies, 0.5),
        "push_p99_ms": pct(latencies, 0.99),
        "pushes_per_s": len(latencies) / elapsed,
        "body_bytes": body_bytes,
        "content_bytes": load.content_bytes,
        "stored_bytes": stored["contents_bytes"],
        "contents": stored["contents"],
        "dedup": load.content_bytes / stored["contents_bytes"] if stored["contents_bytes"] else 0.0,
        "db_grown_bytes": grown,
        "db_ratio": body_bytes / grown if grown > 0 else 0.0,
        "row_overhead_bytes": (grown - stored["contents_bytes"]) / max(1, stored["snapshot_rows"]),
        "storage": stored,
        "chats": len(chat_ids),
        "prompt_p50_ms": pct(seq.prompt, 0.5),
        "prompt_p99_ms": pct(seq.prompt, 0.99),
        "floor_p50_ms": pct(seq.floor, 0.5),
        "floor_p99_ms": pct(seq.floor, 0.99),
        "prompt_rps_8": prompt_rps,
        "floor_rps_8": floor_rps,
        "prompt_bytes": seq.prompt_bytes,
        "stages_ms": steps,
        "errors": errors,
    }


def report(results: Sequence[dict[str, Any]], load: Workload, args: argparse.Namespace) -> None:
    load_avg = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load average {load_avg}"
    )
    print(
        f"{args.agents} agents x 100 resources; skill bytes shared across agents: "
        f"{load.shared_skill_bytes / max(1, load.skill_bytes):.1%}; content pushed {load.content_bytes / 2**20:.1f} MiB"
        f" (distinct {load.distinct_bytes / 2**20:.1f} MiB, best possible ratio "
        f"{load.content_bytes / max(1, load.distinct_bytes):.2f}x); JSON bodies "
        f"{sum(len(b) for b in load.bodies) / 2**20:.1f} MiB"
    )
    print(f"{args.prompts} sequential prompts over {min(args.chats, args.agents)} chats after one warm-up round;")
    print(f"pushes {args.push_concurrency} in flight; throughput: {args.concurrent} requests, 8 in flight\n")
    rows_: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
        ("push p50 ms", lambda r: f"{r['push_p50_ms']:.1f}"),
        ("push p99 ms", lambda r: f"{r['push_p99_ms']:.1f}"),
        ("pushes/s", lambda r: f"{r['pushes_per_s']:.1f}"),
        ("content pushed MiB", lambda r: f"{r['content_bytes'] / 2**20:.1f}"),
        ("contents stored MiB", lambda r: f"{r['stored_bytes'] / 2**20:.1f}"),
        ("dedup ratio (content)", lambda r: f"{r['dedup']:.2f}x"),
        ("JSON bodies MiB", lambda r: f"{r['body_bytes'] / 2**20:.1f}"),
        ("database growth MiB", lambda r: f"{r['db_grown_bytes'] / 2**20:.1f}"),
        ("bodies / growth", lambda r: f"{r['db_ratio']:.2f}x"),
        ("growth beyond contents, B/row", lambda r: f"{r['row_overhead_bytes']:.0f}"),
        ("prompt p50 ms", lambda r: f"{r['prompt_p50_ms']:.2f}"),
        ("prompt p99 ms", lambda r: f"{r['prompt_p99_ms']:.2f}"),
        ("floor /healthz p50 ms", lambda r: f"{r['floor_p50_ms']:.2f}"),
        ("floor /healthz p99 ms", lambda r: f"{r['floor_p99_ms']:.2f}"),
        ("prompt / floor p50", lambda r: f"{r['prompt_p50_ms'] / r['floor_p50_ms']:.1f}x"),
        ("prompt req/s x8", lambda r: f"{r['prompt_rps_8']:.0f}"),
        ("floor req/s x8", lambda r: f"{r['floor_rps_8']:.0f}"),
        ("prompt response KiB", lambda r: f"{r['prompt_bytes'] / 1024:.1f}"),
        *(
            (f"in-process: {name}", (lambda r, n=name: f"{r['stages_ms'][n]:.2f}"))
            for name in (*STEPS, "pinned content read KiB")
        ),
        ("run seconds", lambda r: f"{r['seconds']:.0f}"),
        ("errors", lambda r: str(len(r["errors"]))),
    ]
    width = max(len(name) for name, _ in rows_)
    print(f"{'measure':{width}} " + " ".join(f"{r['label']:>14}" for r in results))
    for name, cell in rows_:
        print(f"{name:{width}} " + " ".join(f"{cell(r):>14}" for r in results))
    for r in results:
        for error in r["errors"][:10]:
            print(f"{r['label']}: {error}")
        extra = {k: v for k, v in r["storage"].items() if k.startswith("table_")}
        if extra:
            print(f"{r['label']} table sizes MiB: " + ", ".join(f"{k[6:]} {v / 2**20:.1f}" for k, v in extra.items()))
    print(
        "\nSQLite runs one replica only: its events are delivered in-process, so a second server on the same file"
        " would not see the first one's events."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--chats", type=int, default=100)
    parser.add_argument("--prompts", type=int, default=2000, help="sequential prompt requests (each with a /healthz)")
    parser.add_argument("--concurrent", type=int, default=500, help="prompt (and /healthz) requests timed 8 in flight")
    parser.add_argument("--push-concurrency", type=int, default=8)
    parser.add_argument("--stage-rounds", type=int, default=300, help="in-process prompt builds timed per run")
    parser.add_argument("--skip-postgres", action="store_true", help="run on SQLite only")
    parser.add_argument("--only", choices=["sqlite-1", "postgresql-1", "postgresql-2"], action="append")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the in-process prompt stages")
    parser.add_argument("--py-spy", metavar="BIN", help="py-spy binary: sample the first server during the prompts")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    wanted = args.only or ["sqlite-1", "postgresql-1", "postgresql-2"]
    if args.skip_postgres:
        wanted = [w for w in wanted if w == "sqlite-1"]
    OUT.mkdir(exist_ok=True)
    load = workload(args.agents)
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="agentcontext-control-bench-") as name:
        tmp = Path(name)

        def keep(result: dict[str, Any]) -> None:
            results.append(result)
            if args.json:  # after each run, so a failing run loses nothing before it
                args.json.write_text(json.dumps(results, indent=2, default=str) + "\n")

        if "sqlite-1" in wanted:
            keep(run("sqlite-1", f"sqlite:///{tmp / 'control.db'}", 1, load, args, tmp))
        postgres = [w for w in wanted if w.startswith("postgresql")]
        if postgres:
            with TempCluster.start() as cluster:
                for label in postgres:
                    keep(run(label, cluster.create_database(label.replace("-", "_")), int(label[-1]), load, args, tmp))
    report(results, load, args)


if __name__ == "__main__":
    main()
