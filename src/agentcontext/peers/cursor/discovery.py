"""What Cursor loads at the start of a chat in its workspace (the work dir), as its documentation says.

1. The workspace's ``.cursor/rules/**/*.mdc`` (and ``.md``) files in path order, each labelled by
   its frontmatter (:mod:`.rules`): only ``alwaysApply: true`` ones are in the startup doc; the
   others are listed ``path_scoped``, ``agent_requested`` or ``manual``.
2. The workspace's ``AGENTS.md``, then ``CLAUDE.md`` (read too), then the legacy ``.cursorrules``.

Cursor's documentation gives no order among these; this is the order the doc shows them in.
Folders below the workspace load later (:mod:`.later`).
"""

from __future__ import annotations

import os

from agentcontext.fs.files import Reader
from agentcontext.instructions.chain import Found, InstructionFiles, numbered
from agentcontext.layout import Layout
from agentcontext.peers.cursor import files as cursor_files
from agentcontext.resource import Load, LoadType
from agentcontext.settings.config import Config

ROOT_FILES = ("AGENTS.md", "CLAUDE.md", ".cursorrules")
_AT_ROOT = {
    "AGENTS.md": "the workspace's AGENTS.md: Cursor sends it with every request",
    "CLAUDE.md": "a CLAUDE.md at the workspace root: Cursor reads it too",
    ".cursorrules": "the legacy single rules file: Cursor still sends it",
}


def discover(layout: Layout, config: Config, reader: Reader) -> list[Found]:
    """The workspace's rules and named files, startup ones numbered in doc order."""
    work_dir = layout.work_dir
    boundary = layout.doc_boundary
    files = InstructionFiles(reader, config.snapshot.max_resource_bytes)
    found = cursor_files.rules(reader, files, work_dir, boundary)
    for name in ROOT_FILES:
        load = Load(LoadType.STARTUP, reason=_AT_ROOT[name])
        item = cursor_files.named(files, reader, os.path.join(work_dir, name), boundary, load)
        if item is not None:
            found.append(item)
    return numbered(found)
