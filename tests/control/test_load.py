"""bench/load.py, in miniature: a real server, a few agents pushing and chats refreshing, nothing lost."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "load.py"


@pytest.mark.slow
def test_a_short_load_run_loses_nothing_and_fails_no_request(tmp_path: Path) -> None:
    out = tmp_path / "load.json"
    command = [sys.executable, str(BENCH), "--agents", "3", "--chats", "6", "--seconds", "4", "--json", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=110, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    result = json.loads(out.read_text())
    assert result["lost"] == {"pushes": 0, "snapshot rows": 0, "dirty marks": 0, "events": 0, "pins": 0}
    assert result["error_rate"] == 0
    assert result["pushes_accepted"] > 3  # the initial pushes are not counted: these are the timed ones
    assert result["events"]["state"] == 6
    assert result["server_log_errors"] == []


def _load_module() -> Any:
    sys.path.insert(0, str(BENCH.parent))  # load.py imports its neighbour control.py
    try:
        spec = importlib.util.spec_from_file_location("bench_load", BENCH)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["bench_load"] = module  # its dataclasses look their module up
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH.parent))


def test_a_rotating_load_edits_one_file_a_push_and_a_shown_text_one_push_in_five() -> None:
    load = _load_module()
    fixed = load.static_resources(7)

    def pushed(version: int, salt: str = "") -> dict[str, tuple[str, str | None]]:
        body, digest = load.push_body(7, fixed, version, salt, initial=False, changes=load.ROTATE)
        snapshot = json.loads(body)
        assert snapshot["aggregate_hash"] == digest
        return {r["path"]: (r["content_hash"], r.get("description")) for r in snapshot["resources"]}

    shown = {"/home/coder/ws-0007/AGENTS.md", "/home/coder/ws-0007/api/AGENTS.md"}
    edited = []
    for version in range(2, 42):
        before, after = pushed(version - 1), pushed(version)
        changed = [path for path in after if after[path] != before[path]]
        assert len(changed) == 1 and after[changed[0]][1] == before[changed[0]][1]  # a skill keeps its description
        edited.append(changed[0])
    assert sum(path in shown for path in edited) == len(edited) // 5
    assert len(set(edited)) == 10  # every file of the workspace in turn
    assert pushed(9, "-replayed") != pushed(9)  # a replay of a version carries other content


def test_the_old_mix_changes_the_root_agents_md_with_every_push() -> None:
    load = _load_module()
    fixed = load.static_resources(2)

    def hashes(version: int) -> dict[str, str]:
        body, _ = load.push_body(2, fixed, version, "", initial=False, changes=load.ROOT_EVERY_PUSH)
        return {r["path"]: r["content_hash"] for r in json.loads(body)["resources"]}

    for version in range(2, 12):
        before, after = hashes(version - 1), hashes(version)
        assert [path for path in after if after[path] != before[path]] == ["/home/coder/ws-0002/AGENTS.md"]


@pytest.mark.anyio
async def test_only_a_request_started_once_the_load_settled_counts_toward_the_settled_p99() -> None:
    load = _load_module()

    class Answered:
        ok = True

    class Slow:
        def __init__(self, seconds: float) -> None:
            self.seconds = seconds

        async def request(self, *_: Any, **__: Any) -> Answered:
            time.sleep(self.seconds)  # the latency the record measures, made on purpose
            return Answered()

    record = load.Record()
    record.began = time.perf_counter() - load.SETTLED_AFTER - 1  # the loops began long enough ago
    await record.call(Slow(0.0), "prompt", "GET", "/p")
    record.began = time.perf_counter()  # the loops just began: a cold start
    await record.call(Slow(0.3), "prompt", "GET", "/p")
    assert len(record.latency["prompt"]) == 2
    assert len(record.settled["prompt"]) == 1 and record.settled["prompt"][0] < 0.25


def test_a_run_slow_only_while_it_settles_is_held_from_then_on_but_not_overall() -> None:
    load = _load_module()
    kinds = {kind: {"p99_ms": 10.0, "settled_p99_ms": 10.0} for kind in load.KINDS}
    kinds["heartbeat"] = {"p99_ms": 4_000.0, "settled_p99_ms": 120.0}
    run = {"kinds": kinds, "error_rate": 0, "lost": {"pushes": 0}}
    assert not load.held(run)
    assert load.held(run, settled=True)
    assert not load.held({**run, "lost": {"pushes": 1}}, settled=True)


@pytest.mark.anyio
async def test_a_loop_asleep_until_its_next_request_ends_when_the_run_does() -> None:
    load = _load_module()
    pace = load.PACES["realistic"]
    chat = load.ChatSim("c1", 0, "skill", "pinned")
    agent = load.AgentSim(0, "token", [], "rotate")
    started = time.monotonic()
    later = started + 100  # the first request of each would come long after the run ends
    await load.run_chat(None, load.Record(), chat, later, started + 0.2, pace)
    await load.run_agent(None, load.Record(), agent, later, started + 0.2, pace)
    assert time.monotonic() - started < 1
    assert chat.turns == 0 and agent.version == 0


def test_the_machines_cpu_is_told_by_window_busy_and_stolen_apart_from_idle_and_io_wait() -> None:
    load = _load_module()

    def counters(user: int, idle: int, iowait: int, steal: int) -> tuple[int, ...]:
        return (user, 0, 0, idle, iowait, 0, 0, steal, 0, 0)  # /proc/stat's cpu line, guest time last

    began = 100.0
    samples = [
        (98.0, counters(0, 0, 0, 0)),
        (99.5, counters(100, 100, 0, 0)),  # ends before the loops began: no window's
        (101.0, counters(200, 100, 0, 0)),  # 0-5 s: all busy
        (104.0, counters(500, 100, 0, 0)),
        (106.0, counters(520, 160, 20, 0)),  # 5-10 s: idle and I/O wait are not busy
        (109.0, counters(580, 160, 20, 100)),  # stolen by the host: busy (not ours to use), and said apart
    ]
    windows = load.machine_by_5s(samples, began, cpus=2)
    assert windows.keys() == {0, 5}
    assert windows[0] == {"busy_percent": 200.0, "steal_percent": 0.0}
    assert windows[5]["busy_percent"] == pytest.approx(200 * (20 + 160) / (100 + 160))
    assert windows[5]["steal_percent"] == pytest.approx(200 * 100 / (100 + 160))
