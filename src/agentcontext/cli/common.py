"""Options and helpers shared by the command modules."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any, TextIO

import typer
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from agentcontext.instructions.applied import Applicable
from agentcontext.instructions.ondemand import Resolver
from agentcontext.scan import Scanner, ScanResult, resolve_work_dir
from agentcontext.settings.config import Config, load_config
from agentcontext.settings.profiles import PROFILES
from agentcontext.terminal import visible

DirArgument = typer.Argument(
    Path("."), help="The work dir: where the agent runs. Defaults to the current directory.", show_default=False
)
ProfileOption = typer.Option(
    None,
    "--profile",
    "-p",
    help=f"Rules to apply: {', '.join(PROFILES[:-1])} or {PROFILES[-1]} (docs/agents.md). Overrides the config file.",
)
ConfigOption = typer.Option(
    None, "--config", "-c", help="Config file to use instead of agentcontext.toml / the user config.", dir_okay=False
)
JsonOption = typer.Option(False, "--json", help="Print JSON for other programs instead of a table.")
TrustOption = typer.Option(
    None,
    "--mcp-trust",
    help="`approve` (the default): the work dir's MCP servers start once you approve each entry"
    " (`agentcontext mcp trust`); `auto`: they start unasked, for environments whose operator vouches for them.",
    show_default=False,
)

STATUS_STYLE = {
    "ok": "green",
    "truncated": "yellow",
    "oversize": "red",
    "unreadable": "red",
    "invalid": "red",
    "excluded": "magenta",
    "shadowed": "bright_black",
    "disabled": "bright_black",
    "pending": "yellow",  # an MCP server waiting for approval (agentcontext.snapshot)
}


def echo_exact(text: str) -> None:
    """Exact text (a doc, a rendered prompt, a tool's answer): byte for byte when piped, no newline added; on a
    terminal, with its control characters made visible (:func:`agentcontext.terminal.visible`) and a note saying
    so, and a final newline so the prompt that follows starts on a line of its own."""
    out = visible(text)
    ended = "\n" if sys.stdout.isatty() and not out.endswith("\n") else ""
    write_out(out + ended)  # not typer.echo: piped, it would strip the text's escape sequences
    if out != text:
        typer.echo("(control characters shown as \\uXXXX: pipe the output for the exact bytes)", err=True)


UNBOUNDED_WIDTH = 1_000_000  # piped, with no COLUMNS: no line is wrapped (a table sizes to its content)


def _console(*, to_stderr: bool) -> Console:
    """A console that, piped with no ``COLUMNS``, wraps nothing: a path cut across rows is found by no ``grep``.

    Rich would take 80 columns there (or the width of a terminal on stdin); a terminal, or ``COLUMNS``, keeps its
    width.
    """
    stream = sys.stderr if to_stderr else sys.stdout
    piped = not _isatty(stream) and not os.environ.get("COLUMNS", "").isdigit()
    return _Console(stderr=to_stderr, highlight=False, soft_wrap=False, width=UNBOUNDED_WIDTH if piped else None)


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """Rich ends with 1 here, which our commands use for "found problems": end as ``| head`` expects instead."""
        self.quiet = True
        raise SystemExit(output_gone())


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


def stdout() -> Console:
    return _console(to_stderr=False)


def stderr() -> Console:
    return _console(to_stderr=True)


def fitted(table: Table, console: Console, *, wide: Collection[str] = ()) -> Table:
    """``table`` as it fits ``console``, no column hidden.

    Where its content fits, it is left as it is (a table sizes to its content). On a narrower console Rich would
    squeeze columns to nothing and print the table without them; here each column gets a width instead: a column
    that does not wrap (a status, a severity) keeps its own, and the others fold, each keeping its own width up to
    its share of the room left, a ``wide`` column (by header: a path, a reason) two shares, any other one. When
    that leaves a column under ``READABLE`` characters, a table with borders drops the padding of its cells (its
    borders still part them) and shares again.
    """
    unbounded = console.options.update_width(UNBOUNDED_WIDTH)
    needed = Measurement.get(console, unbounded, table).maximum
    if needed <= console.width:
        return table
    columns = table.columns
    natural = [
        max(Measurement.get(console, unbounded, cell).maximum for cell in (column.header, *column.cells))
        for column in columns
    ]
    fixed = [column.no_wrap for column in columns]
    weights = [2 if column.header in wide else 1 for column in columns]
    widths = _shared(natural, fixed, weights, console.width - (needed - sum(natural)))  # less borders and padding
    cramped = any(width < min(size, READABLE) for width, size in zip(widths, natural, strict=True))
    if cramped and table.box is not None:
        table.padding = (0, 0)
        needed = Measurement.get(console, unbounded, table).maximum
        widths = _shared(natural, fixed, weights, console.width - (needed - sum(natural)))
    for column, width in zip(columns, widths, strict=True):
        column.width = width
    return table


READABLE = 4  # characters a folded column is given, where the console has room for them


def _shared(natural: list[int], fixed: list[bool], weights: list[int], room: int) -> list[int]:
    """Widths for columns of these ``natural`` widths in ``room``: a fixed one keeps its own; the others share the
    rest by ``weights``, one narrower than its share keeping its own width and leaving the rest to the others."""
    widths = [size if keep else 0 for size, keep in zip(natural, fixed, strict=True)]
    left = room - sum(widths)
    sharing = [i for i, keep in enumerate(fixed) if not keep]
    while sharing:
        shares = sum(weights[i] for i in sharing)
        narrow = [i for i in sharing if natural[i] * shares <= left * weights[i]]
        if not narrow:
            break
        for i in narrow:
            widths[i] = natural[i]
            left -= natural[i]
            sharing.remove(i)
    shares = sum(weights[i] for i in sharing)
    for i in sharing:
        widths[i] = max(1, left * weights[i] // shares)
    spare = left - sum(widths[i] for i in sharing)
    for i in sorted(sharing, key=lambda i: -weights[i])[: max(0, spare)]:  # what rounding left, wide ones first
        widths[i] += 1
    return widths


def configure(work_dir: Path, profile: str | None, config_file: Path | None, trust: str | None = None) -> Config:
    overrides: dict[str, Any] = {"profile": profile} if profile else {}
    if trust:
        overrides["mcp.trust"] = trust
    return load_config(resolve_work_dir(work_dir), config_file=config_file, overrides=overrides)


def run_scan(work_dir: Path, profile: str | None, config_file: Path | None) -> ScanResult:
    """Scan with a live status line on an interactive terminal."""
    config = configure(work_dir, profile, config_file)
    scanner = Scanner(work_dir, config)
    if sys.stderr.isatty():
        with stderr().status(f"Scanning {scanner.work_dir} …"):
            return scanner.run()
    return scanner.run()


def lookup(result: ScanResult, paths: list[str]) -> Applicable:
    """What applies to ``paths`` (relative to the work dir) after the startup of ``result``.

    Raises:
        InvalidRequestError: too many paths. UnavailableError: the lookup ran out of time.
    """
    deadline = time.monotonic() + result.config.ondemand.timeout
    return Resolver().resolve(result, paths, deadline=deadline)


def print_json(data: Any) -> None:
    write_out(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def write_out(text: str) -> None:
    """``text`` to stdout as it is, a chunk at a time: a reader gone (``| head``) ends the command with
    ``OUTPUT_GONE``. (One large write to a pipe its reader closed is taken in part and the rest dropped without
    an error, so the command would end 0 having printed a fraction; Typer's own handling ends with 1.)"""
    try:
        for start in range(0, len(text), _CHUNK):
            sys.stdout.write(text[start : start + _CHUNK])
            sys.stdout.flush()
    except BrokenPipeError:
        raise SystemExit(output_gone()) from None


_CHUNK = 16 * 1024  # characters; each written whole by a pipe with room (its buffer is 64 KiB)


def shown_path(path: str, base: str) -> str:
    """A path relative to ``base`` when it lies inside it, else absolute."""
    if path == base:
        return "."
    prefix = base if base.endswith(os.sep) else base + os.sep
    return path[len(prefix) :] if path.startswith(prefix) else path


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB"):
        if value < 1024 or unit == "MiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


def validation_note(config: Config) -> str:
    """Which rules checked the skills of a scan, and where that came from."""
    origin = config.origin("skills.validation")
    where = f"the {config.profile} profile" if origin == "default" else origin
    return f"skills checked with the {config.skills.validation} rules (skills.validation, from {where})"


OUTPUT_GONE = 141  # 128 + SIGPIPE: what a shell reports for a program whose reader went away (`| head`)


def output_gone() -> int:
    """stdout's reader is gone: stdout becomes /dev/null (the interpreter's last flush would fail again), and the
    exit code to end with is returned."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return OUTPUT_GONE
