"""The audit's own walk for skills: every ``SKILL.md`` it finds, bounded by time, not by a folder count.

The scan looks at no more than ``skills.max_dirs_per_root`` folders of a container, and
``skills.max_depth`` deep: an agent must start fast. A repository can use that: 3,000
decoy folders push a skill past the cap, and a skill nested deeper than our profile looks
is still loaded by agents that look deeper. So the audit walks the same containers again,
with the scan's rules (names starting with ``.`` and ``node_modules`` skipped, a folder
holding a ``SKILL.md`` is a skill and a leaf, symlinks followed only inside the
container's boundary, each folder once) but without the folder cap and
:data:`MAX_DEPTH` (6) deep, and hands every ``SKILL.md`` the scan did not reach to the
audit's text rules.

The walk is bounded by a :class:`Budget` of time instead. When it runs out, the walk
stops and says where: the audit reports that as an error (``audit-incomplete``), and the
command exits non-zero whatever ``--fail-on`` says, since what was not looked at may
hide anything.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from agentcontext.fs.files import EntryKind, Reader
from agentcontext.resource import Kind as ResourceKind
from agentcontext.scan import ScanResult
from agentcontext.skills.discovery import Container, containers

MAX_DEPTH = 6  # the deepest any profile looks (Codex's)
DEFAULT_SECONDS = 60.0
_SKIPPED_NAMES = frozenset({"node_modules"})


@dataclass
class Budget:
    """Time the audit may spend; ``clock`` is injectable so tests can run it out deterministically."""

    seconds: float
    clock: Callable[[], float] = time.monotonic
    _end: float = field(init=False)

    def __post_init__(self) -> None:
        self._end = self.clock() + self.seconds

    def spent(self) -> bool:
        return self.clock() >= self._end


@dataclass(frozen=True, slots=True)
class Unscanned:
    """A ``SKILL.md`` the scan did not reach, with the boundary its files must stay in."""

    path: str
    boundary: str


@dataclass(frozen=True, slots=True)
class Walk:
    found: tuple[Unscanned, ...]
    stopped_in: str | None = None  # the container the walk was in when the time ran out
    left: int = 0  # folders it had still to look at there


def walk(result: ScanResult, reader: Reader, budget: Budget) -> Walk:
    """Every ``SKILL.md`` below the scan's skill containers that the scan has no resource for."""
    if not result.config.skills.enabled:
        return Walk(())
    known = {r.path for r in result.snapshot.resources if r.kind is ResourceKind.SKILL}
    found: list[Unscanned] = []
    for container in containers(result.layout, reader):
        if reader.probe(container.path, container.boundary).kind is not EntryKind.DIRECTORY:
            continue
        left = _walk_container(container, result.config.skills.meta_file, reader, budget, known, found)
        if left:
            return Walk(tuple(found), container.path, left)
    return Walk(tuple(found))


def _walk_container(
    container: Container, meta_file: str, reader: Reader, budget: Budget, known: set[str], found: list[Unscanned]
) -> int:
    """Breadth first below one container; the number of folders left when the time ran out (0: done)."""
    queue: deque[tuple[str, int]] = deque([(container.path, 0)])
    visited = {reader.real_root(container.path)}
    while queue:
        if budget.spent():
            return len(queue)
        directory, depth = queue.popleft()
        for path in _subfolders(directory, container.boundary, reader, visited):
            meta = reader.probe(f"{path}{os.sep}{meta_file}", container.boundary)
            if meta.kind is EntryKind.FILE:
                if meta.path not in known:
                    found.append(Unscanned(meta.path, container.boundary))
            elif depth + 1 < MAX_DEPTH:
                queue.append((path, depth + 1))
    return 0


def _subfolders(directory: str, boundary: str, reader: Reader, visited: set[str]) -> Iterator[str]:
    """The folders of ``directory`` not visited yet, links followed only inside ``boundary``."""
    real_directory = reader.real_root(directory)
    for child in reader.list_dir(directory):
        if child.name[0] == "." or child.name in _SKIPPED_NAMES or not (child.is_dir or child.is_symlink):
            continue
        path = f"{directory}{os.sep}{child.name}"
        real = f"{real_directory}{os.sep}{child.name}"
        if child.is_symlink:
            entry = reader.probe(path, boundary)
            if entry.kind is not EntryKind.DIRECTORY:
                continue  # an escaping or broken link: the scan reports it
            real = entry.real_path
        if real not in visited:
            visited.add(real)
            yield path
