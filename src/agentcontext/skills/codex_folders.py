"""What Codex 0.171.0 looks for in and above a skill's folder besides its ``SKILL.md``.

**A policy** (``skills.openai_policy``): ``agents/openai.yaml`` in a skill's folder with
``policy.allow_implicit_invocation: false`` keeps the skill out of Codex's list (``disabled``).

**A plugin's name** (``skills.plugin_manifests``): a skill below a plugin's manifest is listed as
``<plugin>:<name>``. A folder is a plugin's when it holds ``.codex-plugin/plugin.json`` or, when that file is not
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
from agentcontext.skills.yaml_subset import YAML_ERRORS, pyyaml_load

MANIFEST_FOLDERS = frozenset({".codex-plugin", ".claude-plugin"})
MANIFESTS = (".codex-plugin/plugin.json", ".claude-plugin/plugin.json")  # Codex's own first
POLICY_FOLDER = "agents"
LOOKED_FOR = MANIFEST_FOLDERS | {POLICY_FOLDER}
_CAP = 64 * 1024


class CodexFolders:
    """Codex's files of each skill folder, each folder looked into once a scan.

    A folder the skills walk listed (the container and the folders below it) is looked into by its
    listing, since a probe for each skill would cost two system calls a skill on every rescan; one
    below the container that it did not list (past ``skills.max_dirs_per_root``) holds neither file
    here. The folders above the container, up to the boundary, are probed for a manifest.
    """

    __slots__ = ("_known", "_listed", "_reader")

    def __init__(self, reader: Reader) -> None:
        self._reader = reader
        self._known: dict[tuple[str, str], str | None] = {}
        self._listed: dict[str, frozenset[str]] = {}  # folders the walk listed -> the names looked for among them

    def listed(self, folder: str, names: frozenset[str]) -> None:
        """The walk listed ``folder``; ``names``: those of :data:`LOOKED_FOR` among its entries."""
        self._listed[folder] = names

    def hidden(self, folder: str, boundary: str) -> bool:
        """Whether the skill in ``folder`` (a folder the walk listed) has a policy keeping it out of Codex's list."""
        if POLICY_FOLDER not in self._listed.get(folder, ()):
            return False
        return _hidden_by_policy(folder, boundary, self._reader)

    def plugin_of(self, folder: str, container: str, boundary: str) -> str | None:
        """The plugin name of the nearest plugin folder from ``folder`` (in ``container`` or the container itself)
        up to ``boundary``; None: no plugin's."""
        key = (folder, boundary)
        if key in self._known:
            return self._known[key]
        names = self._listed.get(folder)
        if names is None:  # above the container: probed; below it and unlisted: past the cap
            manifest = folder == container or not is_within(folder, container)
        else:
            manifest = not MANIFEST_FOLDERS.isdisjoint(names)
        named = self._own(folder, boundary) if manifest else None
        parent = posixpath.dirname(folder)
        if named is None and folder != boundary and parent != folder and is_within(parent, boundary):
            named = self.plugin_of(parent, container, boundary)
        self._known[key] = named
        return named

    def _own(self, folder: str, boundary: str) -> str | None:
        for manifest in MANIFESTS:
            entry = self._reader.probe(f"{folder}/{manifest}", boundary)
            if entry.kind is not EntryKind.FILE:
                continue
            try:
                data = json.loads(self._reader.read(entry, _CAP))
            except (OSError, ValueError, RecursionError):  # RecursionError: nested past the parser's depth
                return None
            if not isinstance(data, dict):
                return None
            name = data.get("name")
            if name is None or name == "":
                return posixpath.basename(folder)
            return name if isinstance(name, str) else None
        return None


def _hidden_by_policy(folder: str, boundary: str, reader: Reader) -> bool:
    """Codex's ``agents/openai.yaml`` policy: ``allow_implicit_invocation: false`` hides a skill."""
    entry = reader.probe(f"{folder}/{POLICY_FOLDER}/openai.yaml", boundary)
    if entry.kind is not EntryKind.FILE:
        return False
    try:
        data = pyyaml_load(reader.read(entry, _CAP))
    except (OSError, *YAML_ERRORS):
        return False
    policy = data.get("policy") if isinstance(data, dict) else None
    return isinstance(policy, dict) and policy.get("allow_implicit_invocation") is False
