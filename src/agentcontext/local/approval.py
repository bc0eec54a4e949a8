"""``agentcontext up``'s question before the first start: which of the repository's MCP servers may run.

Under ``mcp.trust = approve`` (the default) a server of the work dir's ``.mcp.json`` runs
only once the user approved its exact entry. Before the agent starts, ``up`` lists every
server not approved yet with what it would run (the command line or URL as written,
credentials masked); on a terminal it asks whether to approve them, and otherwise (or
when the answer is no) says how to approve them later: the dashboard, or the exact
``agentcontext mcp trust`` command. Nothing here starts anything.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console

from agentcontext.config import Config
from agentcontext.mcp_config import ServerSpec
from agentcontext.scan import scan_full
from agentcontext.terminal import shown
from agentcontext.trust import TrustStore


def pending(work_dir: Path, config: Config, store: TrustStore) -> list[ServerSpec]:
    """The work dir's servers that would wait for approval (none under ``mcp.trust = auto``)."""
    if config.mcp.trust == "auto":
        return []
    return [spec for spec in scan_full(work_dir, config).servers if not store.approved(spec)]


def trust_command(work_dir: Path, specs: Sequence[ServerSpec]) -> str:
    """The command that approves ``specs``, to paste into a shell: printable whatever the names hold."""
    names = " ".join(_quoted(spec.name) for spec in specs)
    return f"agentcontext mcp trust --work-dir {_quoted(str(work_dir))} {names}"


def _quoted(word: str) -> str:
    """``shlex.quote``; a word with a control or format character in bash's ``$'…'``, each such character as
    ``\\xHH``/``\\uHHHH``, so the command shows every character and still names the server when pasted."""
    if word.isprintable():
        return shlex.quote(word)
    return "$'" + "".join(_ansi_c(char) for char in word) + "'"


def _ansi_c(char: str) -> str:
    if char in "\\'":
        return "\\" + char
    if char.isprintable():
        return char
    point = ord(char)
    return f"\\x{point:02x}" if point < 0x80 else f"\\u{point:04x}" if point <= 0xFFFF else f"\\U{point:08x}"


def ask(
    specs: Sequence[ServerSpec],
    work_dir: Path,
    store: TrustStore,
    console: Console,
    confirm: Callable[[str], bool] | None,
) -> bool:
    """Show what would run; approve it when ``confirm`` (None: not interactive) says yes. Whether it was approved."""
    noun = "server" if len(specs) == 1 else "servers"
    console.print(f"[bold]{shown(work_dir)}[/] declares {len(specs)} MCP {noun} you have not approved; they would run:")
    for spec in specs:  # every character of what would run is shown: none may hide the rest from the user
        console.print(f"  [bold]{shown(spec.name)}[/]: {shown(spec.shown)}", soft_wrap=True, highlight=False)
    if confirm is not None and confirm(f"Approve and start {'it' if len(specs) == 1 else 'them'}?"):
        store.approve(list(specs))
        console.print(f"Approved {len(specs)} MCP {noun}.")
        return True
    console.print(
        f"Not started. Approve {'it' if len(specs) == 1 else 'them'} later in the dashboard, or with:",
        highlight=False,
    )
    console.print(f"  {shown(trust_command(work_dir, specs))}", soft_wrap=True, highlight=False)
    return False
