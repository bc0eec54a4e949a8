"""Codex's plugin names: a skill below a plugin's manifest is listed as ``<plugin>:<name>`` (Codex 0.169.0).

A folder is a plugin's when it holds ``.codex-plugin/plugin.json`` or, when that file is not
there, ``.claude-plugin/plugin.json``: a JSON object whose ``name`` is a string (missing or
empty, the folder's own name stands in; spaces and any other characters are kept). The nearest
such folder at or above a skill's folder names it. A manifest that is not such an object, or
whose ``name`` is not a string, makes its folder no plugin's and the search goes on above it.
Codex looks up to the filesystem's root; here the search stops at the container's boundary (the
repository, the user's home), since nothing outside the roots is read (docs/agents.md), and a
manifest is read up to 64 KiB (a longer one is no JSON here).
"""

from __future__ import annotations

import json
import posixpath

from agentcontext.fs.files import EntryKind, Reader, is_within

MANIFEST_FOLDERS = frozenset({".codex-plugin", ".claude-plugin"})
MANIFESTS = (".codex-plugin/plugin.json", ".claude-plugin/plugin.json")  # Codex's own first
_MANIFEST_CAP = 64 * 1024


class PluginNames:
    """The plugin each folder is in, looked up once per folder and boundary in one scan.

    A folder the skills walk listed (the container and the folders below it) is looked into by its
    listing, since a probe for each skill would cost two system calls a skill on every rescan; one
    below the container that it did not list (past ``skills.max_dirs_per_root``) holds no manifest
    here. The folders above the container, up to the boundary, are probed.
    """

    __slots__ = ("_known", "_listed", "_reader")

    def __init__(self, reader: Reader) -> None:
        self._reader = reader
        self._known: dict[tuple[str, str], str | None] = {}
        self._listed: dict[str, bool] = {}  # folders the walk listed -> one held a manifest folder

    def listed(self, folder: str, manifest: bool) -> None:
        """The walk listed ``folder``; ``manifest``: one of :data:`MANIFEST_FOLDERS` was among its names."""
        self._listed[folder] = manifest

    def of(self, folder: str, container: str, boundary: str) -> str | None:
        """The plugin name of the nearest plugin folder from ``folder`` (in ``container`` or the container itself)
        up to ``boundary``; None: no plugin's."""
        key = (folder, boundary)
        if key in self._known:
            return self._known[key]
        manifest = self._listed.get(folder)
        if manifest is None:
            manifest = folder == container or not is_within(folder, container)  # unlisted below it: past the cap
        named = self._own(folder, boundary) if manifest else None
        parent = posixpath.dirname(folder)
        if named is None and folder != boundary and parent != folder and is_within(parent, boundary):
            named = self.of(parent, container, boundary)
        self._known[key] = named
        return named

    def _own(self, folder: str, boundary: str) -> str | None:
        for manifest in MANIFESTS:
            entry = self._reader.probe(f"{folder}/{manifest}", boundary)
            if entry.kind is not EntryKind.FILE:
                continue
            try:
                data = json.loads(self._reader.read(entry, _MANIFEST_CAP))
            except (OSError, ValueError, RecursionError):  # RecursionError: nested past the parser's depth
                return None
            if not isinstance(data, dict):
                return None
            name = data.get("name")
            if name is None or name == "":
                return posixpath.basename(folder)
            return name if isinstance(name, str) else None
        return None
