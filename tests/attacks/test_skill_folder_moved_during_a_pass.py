"""A skill folder moved out of the repository and linked back while a scan pass runs.

The scan caches each SKILL.md by its stat key; the moved file keeps its inode, size and
mtime, so a look that followed the new link would find the cached value and serve it as if
the folder were still inside. The folder is opened without following a link
(``Reader.load_each``), so the link is met and refused. The move lands after the pass has
listed the skills folder (``load_each`` is wrapped to make it first), so the outcome does not
depend on winning a race. Kept since an ``openat2`` fast path that looked at
``<folder>/SKILL.md`` through the link before opening it was tried and failed exactly this.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agentcontext.fs.files import Reader
from agentcontext.resource import Resource, Status
from agentcontext.scan import Scanner
from agentcontext.testing import isolated_environ, make_workspace, skill_md, test_config
from tests.containment import outside_the_roots

OLD = 1_000_000_000  # seconds since 1970: older than the racy window, so what is read is cached


def _skill(scanner: Scanner, work: Path) -> Resource:
    resource = scanner.run().snapshot.find(str(work / ".agents" / "skills" / "s" / "SKILL.md"))
    assert resource is not None
    return resource


def test_a_skill_folder_moved_out_and_linked_back_during_a_pass_is_refused_not_served_from_the_cache(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    legit = skill_md("s", "legitimate")
    work = make_workspace(tmp_path / "w", {".git/": "", ".agents/skills/s/SKILL.md": legit})
    folder, away = work / ".agents" / "skills" / "s", outside_the_roots(tmp_path) / "moved"
    os.utime(folder / "SKILL.md", (OLD, OLD))
    env = isolated_environ(home)
    scanner = Scanner(work, test_config(work, home=home, environ=env), environ=env)
    assert _skill(scanner, work).content == legit  # read and cached (its file is old)
    (work / ".agents" / "skills" / "other").mkdir()  # the next pass is a full one
    real = Reader.load_each

    def load_each(self: Reader, *args: Any, **kwargs: Any) -> Any:
        if not folder.is_symlink():  # after the listing: the same inode, now outside, through a link
            os.rename(folder, away)
            folder.symlink_to(away, target_is_directory=True)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Reader, "load_each", load_each)
    skill = _skill(scanner, work)
    assert skill.status is Status.INVALID and "escapes" in (skill.error or "")
    assert skill.content is None
