"""Text that others wrote, made safe to print on a user's terminal.

File names, skill names, descriptions, MCP server entries and errors come from a repository,
an MCP server or a peer: none of them may drive the terminal. :func:`plain` shows control,
format and private-use characters as ``\\uXXXX`` (an escape sequence in a file name could
otherwise clear the screen, move the cursor over a warning, conceal part of a command shown
for approval or plant a link); :func:`shown` also escapes Rich markup for a Rich console
(``[/x]`` in a name would otherwise fail the command or restyle what follows).
:func:`visible` is for the commands whose output is exact text to pipe (a doc, a rendered
prompt, a tool's answer): exact when piped, its control characters made visible on a terminal.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

from rich.markup import escape

from agentcontext.audit.findings import printable


def plain(text: object) -> str:
    """``text`` with its control, format and private-use characters shown as ``\\uXXXX``."""
    return printable(str(text))


def plain_lines(text: object, indent: str = "") -> str:
    """:func:`plain` line by line: its line breaks kept (a YAML error's caret under the line it points at),
    each line after the first indented by ``indent``."""
    return f"\n{indent}".join(printable(line) for line in str(text).split("\n"))


def shown(text: object) -> str:
    """:func:`plain`, its Rich markup escaped: for a Rich console."""
    return escape(printable(str(text)))


def visible(text: str, stream: TextIO | None = None) -> str:
    """``text`` as it is when ``stream`` (stdout) is not a terminal; on one, every control and format
    character but newline, CRLF and tab shown as ``\\uXXXX`` (pipe the command for the exact bytes).
    A lone CR is shown too: it would let the rest of a line overwrite what came before."""
    if not (stream or sys.stdout).isatty():
        return text
    return "\n".join(_visible_line(line) for line in text.split("\n"))


def _visible_line(line: str) -> str:
    body, crlf = (line[:-1], "\r") if line.endswith("\r") else (line, "")
    return "\t".join(printable(cell) for cell in body.split("\t")) + crlf


class PlainFormatter(logging.Formatter):
    """Log lines with :func:`plain` applied line by line: an error can quote what a server or a repository wrote."""

    def format(self, record: logging.LogRecord) -> str:
        return "\n".join(printable(line) for line in super().format(record).split("\n"))


def log_to_stderr(verbose: bool) -> None:
    """The commands' logging: warnings (``verbose``: info too) on stderr, as ``name: message``, made plain."""
    handler = logging.StreamHandler()
    handler.setFormatter(PlainFormatter("%(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, handlers=[handler])
