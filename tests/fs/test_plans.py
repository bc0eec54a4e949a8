"""Plan files are read only inside the plan directory and the work dir, links resolved beneath them."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from agentcontext.errors import UnsafePathError
from agentcontext.fs.plans import PLAN_FILE_LIMIT, plan_roots, read_plan
from agentcontext.testing import make_workspace
from tests.containment import outside_the_roots


def roots(tmp_path: Path) -> tuple[str, str]:
    home, work = tmp_path / "home", tmp_path / "work"
    make_workspace(home, {".agentcontext/plans/PLAN-1.md": "# chat plan\n"})
    make_workspace(work, {"docs/design.md": "# design\n", "big.md": "p" * (40 * 1024)})
    return plan_roots(str(home), str(work))


def test_a_plan_in_either_root_is_read_with_where_it_really_is(tmp_path: Path) -> None:
    plan_dir, work = roots(tmp_path)
    (Path(work) / "link.md").symlink_to(Path(work) / "docs" / "design.md")
    (Path(plan_dir) / "PLAN-2.md").symlink_to(Path(work) / "docs" / "design.md")  # into the other root
    assert read_plan(f"{plan_dir}/PLAN-1.md", (plan_dir, work)) == (f"{plan_dir}/PLAN-1.md", b"# chat plan\n")
    assert read_plan(f"{work}/link.md", (plan_dir, work)) == (f"{work}/docs/design.md", b"# design\n")
    assert read_plan(f"{plan_dir}/PLAN-2.md", (plan_dir, work))[0] == f"{work}/docs/design.md"
    assert len(read_plan(f"{work}/big.md", (plan_dir, work))[1]) == PLAN_FILE_LIMIT


def test_a_plan_elsewhere_or_through_a_link_out_is_refused(tmp_path: Path) -> None:
    plan_dir, work = roots(tmp_path)
    key = outside_the_roots(tmp_path) / "id_rsa.md"
    key.write_text("KEY")
    (Path(work) / "plan.md").symlink_to(key)
    with pytest.raises(UnsafePathError, match="leads outside"):
        read_plan(f"{work}/plan.md", (plan_dir, work))
    with pytest.raises(UnsafePathError, match="is not inside"):
        read_plan(str(key), (plan_dir, work))
    with pytest.raises(UnsafePathError, match="is not inside"):
        read_plan(f"{work}/../outside-the-roots/id_rsa.md", (plan_dir, work))


def test_what_is_not_a_regular_file_is_refused_without_opening_it(tmp_path: Path) -> None:
    plan_dir, work = roots(tmp_path)
    os.mkfifo(Path(work) / "fifo.md")  # opening it for reading would block
    with pytest.raises(OSError) as fifo:
        read_plan(f"{work}/fifo.md", (plan_dir, work))
    with pytest.raises(OSError) as folder:
        read_plan(f"{work}/docs", (plan_dir, work))
    with pytest.raises(FileNotFoundError):
        read_plan(f"{work}/absent.md", (plan_dir, work))
    assert fifo.value.errno == folder.value.errno == errno.EINVAL
