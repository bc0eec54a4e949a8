"""A racing file swapper: another process exchanges pairs of paths as fast as it can.

Each pair is a legitimate file or folder and a symlink to an outside secret, side by side;
``renameat2(RENAME_EXCHANGE)`` swaps their names atomically, so the path a reader asks for
always exists and is, at any instant, either the real thing or the link. The swapper runs
on the other CPU while the test reads; :class:`Tally` counts what the reads got.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio

_SCRIPT = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
paths = [os.fsencode(p) for p in sys.argv[1:]]
pairs = list(zip(paths[::2], paths[1::2]))
def exchange(a, b):
    if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
        sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))
for a, b in pairs:
    exchange(a, b)
    exchange(a, b)
print("swapping", flush=True)
while True:
    for a, b in pairs:
        exchange(a, b)
"""


def plant(path: Path, target: Path) -> tuple[Path, Path]:
    """A symlink to ``target`` beside ``path`` (hidden, so listings skip it): the pair to swap."""
    link = path.with_name(f".{path.name}.swap")
    link.symlink_to(target, target_is_directory=target.is_dir())
    return path, link


@contextlib.contextmanager
def swapping(*pairs: tuple[Path, Path]) -> Iterator[None]:
    """Exchange each pair, over and over, in another process, for the duration of the block."""
    args = [str(p) for pair in pairs for p in pair]
    process = subprocess.Popen(
        [sys.executable, "-c", _SCRIPT, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # the first swaps worked: the race is on
        assert line == "swapping\n", process.stderr.read() if process.stderr else line
        yield
        assert process.poll() is None, "the swapper stopped before the reads did"
    finally:
        process.kill()
        process.wait(timeout=10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


@dataclass
class Tally:
    """What a surface gave back while the swapper ran."""

    secret: str
    legit: str
    leaks: list[str] = field(default_factory=list)
    crashes: list[str] = field(default_factory=list)  # exceptions where an answer was due
    served: int = 0  # answers with the legitimate content
    refused: int = 0  # answers without it (the link was met and refused, or the file was gone)

    def add(self, answer: str | bytes) -> None:
        text = answer.decode("utf-8", errors="replace") if isinstance(answer, bytes) else answer
        if self.secret in text:
            self.leaks.append(text[:200])
        elif self.legit in text:
            self.served += 1
        else:
            self.refused += 1

    def crash(self, exc: BaseException) -> None:
        self.crashes.append(f"{type(exc).__name__}: {exc}"[:200])

    @property
    def reads(self) -> int:
        return len(self.leaks) + len(self.crashes) + self.served + self.refused

    def check(self, reads: int) -> None:
        """No leak, no crash, every read counted, and the race really happened: both outcomes were seen."""
        assert self.reads == reads
        assert (len(self.leaks), len(self.crashes)) == (0, 0), (
            f"{len(self.leaks)} of {reads} reads leaked the outside file, {len(self.crashes)} crashed: "
            f"{self.leaks[:2]} {self.crashes[:2]}"
        )
        assert self.served > 0, "no read got the legitimate file: the race was never lost by the swapper"
        assert self.refused > 0, "no read met the link: the race was never won by the swapper"


Answer = str | bytes


def race(pair: tuple[Path, Path], reads: int, read: Callable[[], Answer], *, secret: str, legit: str) -> None:
    """``reads`` calls of ``read`` while ``pair`` is swapped; an exception is a crash."""
    tally = Tally(secret, legit)
    with swapping(pair):
        for _ in range(reads):
            try:
                tally.add(read())
            except Exception as exc:
                tally.crash(exc)
    tally.check(reads)


async def race_async(
    pair: tuple[Path, Path],
    reads: int,
    read: Callable[[], Awaitable[Answer]],
    *,
    secret: str,
    legit: str,
    in_flight: int = 1,
) -> None:
    """As :func:`race`, with ``in_flight`` calls at a time."""
    tally = Tally(secret, legit)

    async def worker(share: int) -> None:
        for _ in range(share):
            try:
                tally.add(await read())
            except Exception as exc:
                tally.crash(exc)

    with swapping(pair):
        async with anyio.create_task_group() as group:
            for index in range(in_flight):
                group.start_soon(worker, reads // in_flight + (index < reads % in_flight))
    tally.check(reads)
