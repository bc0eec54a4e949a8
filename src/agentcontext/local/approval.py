"""``agentcontext up``'s question before the first start: which of the repository's MCP servers may run.

Under ``mcp.trust = approve`` (the default) a server of the work dir's ``.mcp.json`` runs
only once the user approved what it runs (:mod:`agentcontext.workspace_mcp.launch`). Before the agent
starts, ``up`` shows every server not approved yet whole: the program as resolved, its
arguments, cwd and environment (credentials masked), the repository files it runs with
their hashes, what to weigh, its digest, and what changed since an earlier approval. On a
terminal it asks whether to approve exactly that; otherwise (or when the answer is no) it
says how to approve it later: the dashboard, or an ``agentcontext mcp trust`` command that
names each digest, so that run later it approves nothing that changed since. Nothing here
starts anything.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console

from agentcontext.settings.config import Config
from agentcontext.terminal import shown
from agentcontext.workspace_mcp.approvals import Standing, launches, standing
from agentcontext.workspace_mcp.launch import approve_command
from agentcontext.workspace_mcp.trust import TrustStore


def pending(work_dir: Path, config: Config, store: TrustStore) -> list[Standing]:
    """The work dir's servers that would wait for approval (none under ``mcp.trust = auto``)."""
    if config.mcp.trust == "auto":
        return []
    return [item for launch in launches(work_dir, config) if (item := standing(launch, store)).state == "pending"]


def ask(
    waiting: Sequence[Standing],
    work_dir: Path,
    store: TrustStore,
    console: Console,
    confirm: Callable[[str], bool] | None,
) -> bool:
    """Show what would run; approve it when ``confirm`` (None: not interactive) says yes. Whether it was approved."""
    noun = "server" if len(waiting) == 1 else "servers"
    console.print(
        f"[bold]{shown(work_dir)}[/] declares {len(waiting)} MCP {noun} you have not approved; they would run:"
    )
    for item in waiting:  # every character of what would run is shown: none may hide the rest from the user
        console.print(f"  [bold]{shown(item.launch.name)}[/]:", soft_wrap=True, highlight=False)
        for line in item.lines():
            console.print(f"    {shown(line)}", soft_wrap=True, highlight=False)
    launched = [item.launch for item in waiting]
    if confirm is not None and confirm(f"Approve and start {'it' if len(waiting) == 1 else 'them'}?"):
        store.approve(launched)
        console.print(f"Approved {len(waiting)} MCP {noun}.")
        return True
    console.print(
        f"Not started. Approve {'it' if len(waiting) == 1 else 'them'} later in the dashboard, or with:",
        highlight=False,
    )
    console.print(f"  {shown(approve_command(str(work_dir), launched))}", soft_wrap=True, highlight=False)
    return False
