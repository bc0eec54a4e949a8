"""The seam every agent's rules sit behind: what it reads at startup, what it loads later and why, what it sends.

A :class:`Peer` is one agent (Codex, Claude Code, Coder...). The settings name it
(``project_doc.discovery``: each profile sets it, a user may override it), and
:func:`agentcontext.peers.of` picks it once per scan; from there on the scan, the on-demand
lookups, ``explain``, each agent's view and ``doc --wrap`` ask the peer, and nothing outside
``peers/`` and ``settings/`` compares an agent's name. What every agent shares (reading beneath
a root, the doc budget, skills, MCP configs, the snapshot's caps) stays in the core; a peer
holds only where its agent differs.

Adding an agent is adding a peer: a module here implementing this protocol, its name in
:data:`agentcontext.peers.PEERS`, its profile's defaults (:mod:`agentcontext.settings.profiles`)
and its tests (``docs/architecture.md`` has the recipe).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from agentcontext.fs.files import Reader
from agentcontext.instructions.chain import Found
from agentcontext.instructions.project_doc import ProjectDoc
from agentcontext.layout import Layout, Markers
from agentcontext.resource import Resource
from agentcontext.settings.config import Config, ProjectDocSettings

if TYPE_CHECKING:
    from agentcontext.instructions.applied import Applicable
    from agentcontext.instructions.ondemand import Later


class Peer(Protocol):
    """One agent's rules. Implementations are stateless values: one instance serves every scan."""

    name: str  # the ``project_doc.discovery`` value that picks it
    agent: str  # who it reproduces, for people ("Codex", "Claude Code", "Coder")
    # whether what :meth:`later` finds for a path reaches the model once the agent reads a file there, in the same
    # session (Claude Code's nested files do; the others load nothing more until started there)
    sends_on_read: bool

    # --- startup: where it looks and what it reads ----------------------------------------------

    def plan(self, work_dir: str, config: Config, markers_seen: Markers | None) -> Layout:
        """Where a scan of ``work_dir`` looks, in precedence order (:mod:`agentcontext.layout`)."""
        ...

    def discover(self, layout: Layout, config: Config, reader: Reader) -> list[Found]:
        """Every instruction file it looks at on startup, in the order it sends them; the unused ones say why."""
        ...

    def project_doc(self, resources: Sequence[Resource], sanitized: bool) -> ProjectDoc:
        """The doc it sends, from a scan's (or a stored snapshot's) resources."""
        ...

    def read_names(self, doc: ProjectDocSettings) -> tuple[str, ...]:
        """The instruction file names it reads in a folder (case-sensitively)."""
        ...

    def unread_here(self, directory: str, layout: Layout) -> tuple[str, tuple[str, ...]] | None:
        """Why a file it reads by name is not read in ``directory``, with what to do, when the reason is its own;
        None: the chain's reason (the folder is not between the project root and the work dir)."""
        ...

    # --- later: what it loads when it works somewhere -------------------------------------------

    def child_instructions(self, child: str, layout: Layout, config: Config, reader: Reader) -> list[Found]:
        """The root instruction files of a child checkout of the work dir, labelled ``on_demand`` with their root."""
        ...

    def later(self) -> Later:
        """What it loads when the agent works below the work dir (:mod:`agentcontext.instructions.ondemand`)."""
        ...

    # --- what it sends ---------------------------------------------------------------------------

    def wrap(self, doc: ProjectDoc, work_dir: str) -> str:
        """The doc exactly as it frames it in what it sends ("" when it sends nothing)."""
        ...

    def wrap_later(self, answer: Applicable) -> list[str] | None:
        """The files found on demand as it frames them when it sends them; None: it has no frame of its own."""
        ...
