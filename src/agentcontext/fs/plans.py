"""Plan files for ``propose_plan``: where one may be, and reading it race-free.

A plan is a Markdown file the model wrote, in the chat's plan directory
(``<home>/.agentcontext/plans``) or in the work dir; nothing else is read as a plan, so a
model (or a prompt injected into it) cannot have the agent hand over ``~/.ssh/id_rsa.md``
or any other file it may open. The path is walked from the root that holds it without the
kernel following a link (:mod:`agentcontext.fs.beneath`); a symlink is followed while its
target stays inside one of the two roots, so a repository's ``plan.md -> ~/.ssh/id_rsa``
is refused, and so is one swapped in while the plan is read. What is read is the regular
file that walk found, at most ``PLAN_FILE_LIMIT`` bytes.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
from collections.abc import Sequence

from agentcontext.errors import UnsafePathError
from agentcontext.fs.beneath import MAX_HOPS, EscapeError, Walker, is_within, realpath

PLAN_DIR = ".agentcontext/plans"
PLAN_FILE_LIMIT = 32 * 1024 + 1  # propose_plan's cap plus one byte, so "too large" can be told


def plan_roots(home: str, work_dir: str) -> tuple[str, str]:
    """The two folders plans are read from: the plan directory and the work dir."""
    return posixpath.join(home, PLAN_DIR), work_dir


def read_plan(path: str, roots: Sequence[str]) -> tuple[str, bytes]:
    """Where the plan at ``path`` (absolute) really is, and at most ``PLAN_FILE_LIMIT`` of its bytes.

    Raises:
        UnsafePathError: ``path`` is outside every root, or a symlink leads out of them.
        FileNotFoundError: there is no such file.
        OSError: it is not a regular file (``EINVAL``), or cannot be read.
        ValueError: the path holds a NUL byte.
    """
    current = posixpath.normpath(path)
    real_roots = {root: realpath(root) for root in roots}
    with Walker(limit=32) as walker:
        for _ in range(MAX_HOPS):
            root = _holder(current, real_roots)
            if root is None:
                raise UnsafePathError(_outside(path, roots))
            try:
                found = walker.resolve(current, root, real_roots[root])
            except EscapeError as exc:  # it may land in the other root
                if not any(is_within(exc.target, real) for real in real_roots.values()):
                    raise UnsafePathError(f"a symlink in {path} leads outside {_roots_text(roots)}") from None
                current = exc.target
                continue
            if not stat.S_ISREG(found.st.st_mode):
                raise OSError(errno.EINVAL, "not a regular file")
            return found.real, walker.read(found, PLAN_FILE_LIMIT)
    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))


def _holder(path: str, real_roots: dict[str, str]) -> str | None:
    """The innermost root holding ``path``, as written or by its real path."""
    holding = [root for root, real in real_roots.items() if is_within(path, root) or is_within(path, real)]
    return max(holding, key=len, default=None)


def _roots_text(roots: Sequence[str]) -> str:
    return " and ".join(roots)


def _outside(path: str, roots: Sequence[str]) -> str:
    return f"{path} is not inside {_roots_text(roots)}: plans are read only from the plan directory or the work dir"
