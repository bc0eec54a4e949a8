"""Tables as a user reads them: piped, every path whole on one line; on a narrow terminal, folded, no column hidden."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from agentcontext.testing import make_workspace, skill_md

LONG = "a-skill-whose-folder-name-is-long-enough-to-be-cut-at-eighty-columns"
PATHS = (f".agents/skills/{LONG}/SKILL.md", ".agents/skills/bad/SKILL.md", "AGENTS.md", "CLAUDE.md")
COMMANDS = (("scan",), ("skills", "list"), ("audit",))
_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def workspace(tmp_path: Path) -> Path:
    return make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            "AGENTS.md": "# Root\nuse pytest\n",
            "CLAUDE.md": "claude rules",
            f".agents/skills/{LONG}/SKILL.md": skill_md(LONG, "Does good things"),
            ".agents/skills/bad/SKILL.md": "no frontmatter\n",
        },
    )


def environment(home: Path, **more: str) -> dict[str, str]:
    environ = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES")}
    return {**environ, "HOME": str(home), **more}


def piped(command: tuple[str, ...], root: Path, home: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "agentcontext", *command, str(root)],
        capture_output=True,
        text=True,
        env=environment(home),
        timeout=60,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def on_a_terminal(command: tuple[str, ...], root: Path, home: Path, columns: int) -> str:
    """What ``command`` prints on a terminal ``columns`` wide, its escape sequences taken out."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "agentcontext", *command, str(root)],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=subprocess.DEVNULL,
        env=environment(home, COLUMNS=str(columns)),
    )
    os.close(follower)
    chunks: list[bytes] = []
    try:
        while chunk := os.read(leader, 65536):
            chunks.append(chunk)
    except OSError:  # EIO: the command closed the terminal
        pass
    finally:
        os.close(leader)
    assert process.wait(timeout=60) in (0, 1)
    return _ESCAPE.sub("", b"".join(chunks).decode()).replace("\r", "")


def cells(text: str) -> list[list[str]]:
    """Each line of the table's body, as its cells' text."""
    return [[cell.strip() for cell in line.split("│")[1:-1]] for line in text.splitlines() if line.startswith("│")]


def shown_paths(command: tuple[str, ...]) -> tuple[str, ...]:
    """The paths of :data:`PATHS` that ``command`` lists for :func:`workspace`."""
    if command == ("skills", "list"):
        return tuple(path for path in PATHS if path.startswith(".agents/"))
    return PATHS


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_piped_every_path_is_whole_on_one_line(tmp_path: Path, home: Path, command: tuple[str, ...]) -> None:
    """Found by a review: piped with no ``COLUMNS``, Rich took 80 columns and cut long paths across rows, so
    ``agentcontext skills list repo | grep -c bad/SKILL.md`` found none. To a pipe and to a file alike."""
    root = workspace(tmp_path)
    out = piped(command, root, home)
    lines = out.splitlines()
    for path in shown_paths(command):
        assert [line for line in lines if path in line], (path, out)
    written = tmp_path / "out.txt"
    with written.open("w") as file:
        subprocess.run(
            [sys.executable, "-m", "agentcontext", *command, str(root)],
            stdout=file,
            stderr=subprocess.DEVNULL,
            env=environment(home),
            timeout=60,
        )
    assert written.read_text() == out


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_on_a_40_column_terminal_every_column_shows_and_every_path_folds_whole(
    tmp_path: Path, home: Path, command: tuple[str, ...]
) -> None:
    """Found by a review: at 40 columns ``scan`` squeezed the path, scope and reason columns to nothing (no path was
    shown) and ``audit`` dropped its file and message columns. Now each folds in a column of its own: every column
    has its header, every column with something in it piped has it at 40 columns, and every path is there whole."""
    root = workspace(tmp_path)
    out = on_a_terminal(command, root, home, 40)
    assert all(len(line) <= 40 for line in out.splitlines()), out
    body, wide = cells(out), cells(piped(command, root, home))
    assert body and len(body[0]) == len(wide[0]) and all(len(row) == len(wide[0]) for row in body), out
    columns = range(len(wide[0]))
    header = [line.split("┃")[1:-1] for line in out.splitlines() if line.startswith("┃")]
    assert all(any(titles[index].strip() for titles in header) for index in columns), out
    filled = [index for index in columns if any(row[index] for row in wide)]
    assert [index for index in columns if any(row[index] for row in body)] == filled, out
    path_column = next(i for i in columns if any(row[i].startswith(".agents/") for row in wide))
    folded = "".join(row[path_column] for row in body)  # the fragments of a row's path follow one another
    for path in shown_paths(command):
        assert path in folded, (path, out)
