"""A hostile repository tries to make the agent watch folders outside it through its discovered-files watch.

The agent watches the folders its on-demand answers depended on (issue 34, item 3). The
repository holds links to a folder outside every root (``outside_the_roots``: anything read
there fails the test) and asks about paths through them; it swaps a watched folder for such a
link after the answer; its own ``agentcontext.toml`` raises the watch cap. None of it makes
the agent watch anything outside the work dir, or more than the user's cap.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import httpx
import pytest

from agentcontext.agent.api import create_app
from agentcontext.agent.context import ContextAgent
from agentcontext.agent.discovered import contained
from agentcontext.fs.files import is_within
from agentcontext.settings.config import load_config
from agentcontext.testing import isolated_environ, make_workspace
from tests.agent.conftest import make_agent, ready, running
from tests.agent.test_api import AGENT_URL, TOKEN
from tests.attacks.test_ondemand_paths import hostile

pytestmark = pytest.mark.anyio


async def _ask(agent: ContextAgent, dirs: list[str]) -> None:
    transport = httpx.ASGITransport(app=create_app(agent, token=TOKEN))
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    async with httpx.AsyncClient(transport=transport, base_url=AGENT_URL, headers=headers) as client:
        response = await client.post("/api/v0/context/instructions", content=json.dumps({"dirs": dirs}))
    assert response.status_code == 200, response.text


async def test_paths_through_links_leaving_the_work_dir_add_no_folder_outside_it_to_the_watch(
    tmp_path: Path, home: Path
) -> None:
    work, outside = hostile(tmp_path)
    agent = make_agent(work, home)
    dirs = ["linked/pkg/deep/x.py", "pkg/inner/deep/x.py", "pkg/deep_link_target", "pkg/sub/x.py", "pkg/x.py"]
    async with running(agent):
        await ready(agent)
        await _ask(agent, dirs)
        folders = agent.discovered.folders()
        watched = contained(folders, agent.discovered_bases())
    assert str(work / "pkg") in watched  # the answer's own folders are watched
    assert all(is_within(folder, str(work)) for folder in folders)
    assert all(is_within(os.path.realpath(folder), str(work)) for folder in watched)
    assert str(work / "linked") not in watched and str(work / "pkg" / "inner") not in watched


async def test_a_watched_folder_swapped_for_a_link_out_of_the_work_dir_is_no_longer_watched(
    tmp_path: Path, home: Path
) -> None:
    work, outside = hostile(tmp_path)
    (work / "pkg" / "sub" / "deeper").mkdir()
    agent = make_agent(work, home)
    async with running(agent):
        await ready(agent)
        await _ask(agent, ["pkg/sub/deeper/x.py"])
        before = contained(agent.discovered.folders(), agent.discovered_bases())
        shutil.rmtree(work / "pkg" / "sub" / "deeper")
        os.symlink(outside / "pkg", work / "pkg" / "sub" / "deeper")
        after = contained(agent.discovered.folders(), agent.discovered_bases())
    assert str(work / "pkg" / "sub" / "deeper") in before
    assert str(work / "pkg" / "sub" / "deeper") not in after
    assert all(is_within(os.path.realpath(folder), str(work)) for folder in after)


def test_a_repository_config_cannot_raise_the_watch_cap(tmp_path: Path, home: Path) -> None:
    repo = make_workspace(
        tmp_path / "repo", {".git/": "", "agentcontext.toml": "[agent]\ndiscovered_watch_cap = 90000\n"}
    )
    config = load_config(repo, environ=isolated_environ(home))
    assert config.agent.discovered_watch_cap == 512
    assert any("discovered_watch_cap" in warning for warning in config.warnings)
