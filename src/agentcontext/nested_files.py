"""The folders below the work dir, and one folder's instruction files as an agent started there reads them.

:func:`folders_below` walks breadth first, dot folders and ``node_modules`` skipped, at most
``project_doc.nested_max_dirs`` folders (:func:`stopped` says where a walk stopped): Claude Code's
walk lists their CLAUDE.md family ``on_demand`` (:mod:`agentcontext.claude_md`). For Codex and
Coder, which load nothing below their cwd in a session, the on-demand answer
(:mod:`agentcontext.ondemand`) reads a folder by the profile's own rule (:func:`folder_files`): its
file ``on_demand``, the rest ``not_loaded`` with the reason.
"""

from __future__ import annotations

import os
from collections import deque
from dataclasses import replace

from agentcontext.config import Config
from agentcontext.files import Reader
from agentcontext.instructions import Found, InstructionFiles
from agentcontext.layout import Root
from agentcontext.project_doc import whole
from agentcontext.resource import Kind, Load, LoadType, Resource, Scope, Status

SKIPPED_DIRS = frozenset({"node_modules"})


def folders_below(reader: Reader, work_dir: str, limit: int) -> tuple[list[str], bool]:
    """Up to ``limit`` folders below ``work_dir``, breadth first in listing order; and whether more were left."""
    folders: list[str] = []
    queue: deque[str] = deque([work_dir])
    while queue:
        directory = queue.popleft()
        for item in reader.list_dir(directory):
            if not item.is_dir or item.name.startswith(".") or item.name in SKIPPED_DIRS:
                continue
            if len(folders) >= limit:
                return folders, True
            child = os.path.join(directory, item.name)
            folders.append(child)
            queue.append(child)
    return folders, False


def stopped(work_dir: str, limit: int) -> Resource:
    """The resource that says the walk below ``work_dir`` stopped at ``limit`` folders."""
    reason = f"search below the work dir stopped after {limit} folders (project_doc.nested_max_dirs)"
    load = Load(LoadType.NOT_LOADED, reason=reason)
    return Resource(Kind.INSTRUCTION_FILE, work_dir, Scope.PROJECT, Status.EXCLUDED, error=reason, load=load)


def folder_files(reader: Reader, directory: str, boundary: str, config: Config) -> tuple[Found, ...]:
    """One folder's instruction files by the profile's rule: its file ``on_demand``, the rest ``not_loaded``."""
    doc = config.project_doc
    files = InstructionFiles(reader, config.snapshot.max_resource_bytes)
    if doc.discovery == "roots":
        found = files.at_root(Root(directory, Scope.PROJECT, boundary), doc.root_names)
        winners = [f for f in found if f.candidate]
    else:
        found = files.pick(directory, doc.candidates, boundary, Scope.PROJECT)
        winners = [f for f in found if f.candidate and f.resource.status is not Status.SHADOWED]
    out: list[Found] = []
    for item in found:
        resource = replace(item.resource, doc_order=None)
        if not any(item is w for w in winners) or item.data is None:
            reason = resource.error or "not an instruction file the profile uses here"
            out.append(Found(replace(resource, load=Load(LoadType.NOT_LOADED, reason=reason))))
            continue
        loaded = whole(Found(resource, item.data), keep_bytes=doc.keep_bytes)
        if not (loaded.content or "").strip():
            reason = "empty or whitespace only: nothing to load"
            out.append(Found(replace(loaded, content=None, load=Load(LoadType.NOT_LOADED, reason=reason))))
            continue
        reason = f"the instruction file of {directory}, loaded when the agent works there"
        out.append(Found(replace(loaded, load=Load(LoadType.ON_DEMAND, reason=reason)), item.data))
    return tuple(out)
