"""Hostile paths sent to the on-demand lookup (the agent's ``/context/instructions``, ``applicable()``, the MCP tool).

Every escape points into ``outside_the_roots``: the suite's audit hook fails a test in which
anything there is opened or listed, so "never read" is checked, not assumed. The agent's
route is driven through its real app; the other surfaces share the same resolver.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import threading
import time
from pathlib import Path

import httpx
import pytest

from agentcontext.agent.api import create_app
from agentcontext.scan import Scanner
from agentcontext.testing import isolated_environ, make_workspace, test_config
from tests.agent.conftest import make_agent, ready, running
from tests.agent.test_api import AGENT_URL, TOKEN
from tests.containment import outside_the_roots

SECRET = "secret: must never reach a model"


def hostile(tmp_path: Path) -> tuple[Path, Path]:
    work = make_workspace(tmp_path / "repo", {".git/": "", "AGENTS.md": "root", "pkg/AGENTS.md": "pkg", "pkg/x.py": ""})
    outside = outside_the_roots(tmp_path)
    for folder in (outside, outside / "pkg", outside / "pkg" / "deep"):
        folder.mkdir(exist_ok=True)
        (folder / "AGENTS.md").write_text(SECRET)
        (folder / "CLAUDE.md").write_text(SECRET)
    os.symlink(outside, work / "linked")
    os.symlink(outside / "pkg", work / "pkg" / "inner")
    os.symlink(outside / "AGENTS.md", work / "pkg" / "deep_link_target")
    (work / "pkg" / "sub").mkdir()
    os.symlink(outside / "AGENTS.md", work / "pkg" / "sub" / "AGENTS.md")
    return work, outside


@pytest.mark.anyio
async def test_the_agent_route_refuses_every_escape_and_reads_nothing_outside(tmp_path: Path, home: Path) -> None:
    work, outside = hostile(tmp_path)
    agent = make_agent(work, home)
    dirs = [
        str(outside),
        str(outside / "pkg"),
        "../outside-the-roots",
        "pkg/../../outside-the-roots/pkg",
        "linked",
        "linked/pkg/deep",
        "pkg/inner",
        "pkg/inner/deep",
        "pkg/deep_link_target",
        "~/../outside-the-roots",
        "pkg\0/../../outside-the-roots",
        "pkg/\ud800",
        "pkg/sub",
        "/proc/self/root" + str(outside),
        "//" + str(outside).lstrip("/"),
    ]
    async with (
        running(agent),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_app(agent, token=TOKEN)),
            base_url=AGENT_URL,
            headers={"Authorization": f"Bearer {TOKEN}"},
        ) as client,
    ):
        await ready(agent)
        body = json.dumps({"dirs": dirs})  # ASCII with escapes: a lone surrogate travels as \\ud800
        response = await client.post(
            "/api/v0/context/instructions", content=body, headers={"Content-Type": "application/json"}
        )
    assert response.status_code == 200
    answer = response.json()
    assert SECRET not in response.text
    refused = {r["path"] for r in answer["refused"]}
    shown = {d.encode("utf-8", "backslashreplace").decode() for d in dirs}
    assert refused == shown - {"pkg/sub"}
    [link] = answer["not_loaded"]  # the link is listed, not followed
    assert link["path"] == str(work / "pkg/sub/AGENTS.md") and link["status"] == "invalid"
    assert "escapes" in link["reason"] and "content" not in link
    assert [f["path"] for f in answer["files"]] == [str(work / "pkg/AGENTS.md")]  # for pkg/sub, from inside


def exchange(a: Path, b: Path) -> None:
    """Swap two names in one step (``renameat2(RENAME_EXCHANGE)``): a folder and a link trade places."""
    if _libc.renameat2(-100, os.fsencode(a), -100, os.fsencode(b), 2) != 0:  # AT_FDCWD, RENAME_EXCHANGE
        raise OSError(ctypes.get_errno(), "renameat2")


_libc = ctypes.CDLL(None, use_errno=True)


@pytest.mark.skipif(not hasattr(_libc, "renameat2"), reason="renameat2 (Linux) is needed to swap a folder atomically")
@pytest.mark.skipif(
    importlib.util.find_spec("agentcontext.fs.beneath") is None,
    reason="needs the race-free Reader (agentcontext.fs.beneath, from the sec-files branch): until it is merged, a "
    "folder swapped between the lookup's check and the Reader's open is followed",
)
def test_a_folder_swapped_for_a_link_while_lookups_run_never_leaks_what_is_outside(tmp_path: Path, home: Path) -> None:
    """A racing thread swaps ``pkg/deep`` (a folder with AGENTS.md) with a link to outside, during 3,000 lookups."""
    work, outside = hostile(tmp_path)
    deep, link = work / "pkg" / "deep", work / "pkg" / "swap"
    deep.mkdir()
    (deep / "AGENTS.md").write_text("deep rules\n")
    os.symlink(outside / "pkg", link)
    scanner = Scanner(work, test_config(work, home=home, profile="codex"), environ=isolated_environ(home))
    result = scanner.run()
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            exchange(deep, link)

    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    seen: set[str] = set()
    try:
        deadline = time.monotonic() + 20
        for _ in range(3_000):
            answer = scanner.applicable(["pkg/deep/x.py"], result=result)
            seen.update(f.resource.content or "" for f in answer.files)
            if time.monotonic() > deadline:
                break
    finally:
        stop.set()
        swapper.join(timeout=10)
    assert SECRET not in "".join(seen)
    assert "deep rules\n" in seen  # the swap did let lookups through: the race was run
