"""The profiles: named sets of defaults, since the peers' rules disagree.

``default``  the AGENTS.md chain from the project root down to the work dir with the
             fallbacks ``CLAUDE.md`` and ``.cursorrules``; lenient skills from every
             known container; Claude Code plugin skills.
``codex``    Codex's rules: the same chain without fallbacks, ``$CODEX_HOME``, the
             ``.codex/skills`` and ``.agents/skills`` containers scanned 6 levels deep.
``coder``    Coder's rules: shallow scan roots (declared sources, ``~/.coder``, the
             work dir), every instruction name at a root's top level, kebab-case skill
             names that must match their folder, no separate doc budget.

A profile is only defaults: every key can be overridden by the config file or the
environment. Keys are dotted (``section.key``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PROFILES = ("default", "codex", "coder")

_COMMON: dict[str, Any] = {
    "sources": [],
    "project_doc.discovery": "chain",
    "project_doc.max_bytes": 32 * 1024,
    "project_doc.filename": "AGENTS.md",
    "project_doc.override_filename": "AGENTS.override.md",
    "project_doc.fallback_filenames": ["CLAUDE.md", ".cursorrules"],
    "project_doc.root_markers": [".git"],
    "project_doc.instruction_dirs": ["$CODEX_HOME"],
    "project_doc.sanitize": True,
    "skills.enabled": True,
    "skills.dirs": ["~/.agents/skills", "~/.codex/skills", "~/.claude/skills"],
    "skills.include_plugins": None,
    "skills.plugin_cache": "~/.claude/plugins/cache",
    "skills.containers": [".agents/skills", ".codex/skills", ".claude/skills", "skills"],
    "skills.validation": "lenient",
    "skills.max_depth": 1,
    "skills.max_dirs_per_root": 2000,
    "skills.meta_file": "SKILL.md",
    "skills.disabled": [],
    "snapshot.max_resource_bytes": 64 * 1024,
    "snapshot.max_snapshot_bytes": 2 * 1024 * 1024,
    "snapshot.max_resources": 500,
    "mcp.config_files": [".mcp.json"],
    "mcp.unset_variables": "strict",
    "mcp.connect_timeout": 30.0,
    "mcp.call_timeout": 60.0,
    "mcp.max_output_bytes": 1024 * 1024,
    "mcp.trust": "approve",
    "mcp.max_concurrent_connects": 8,
    "agent.debounce_ms": 250,
    "mcp_server.catalog_chars": 8_000,
    "mcp_server.max_file_lines": 1_000,
    "mcp_server.max_file_bytes": 128 * 1024,
}

_OVERRIDES: dict[str, dict[str, Any]] = {
    "default": {},
    "codex": {
        "project_doc.fallback_filenames": [],
        "project_doc.sanitize": False,
        "skills.dirs": ["$CODEX_HOME/skills", "~/.agents/skills"],
        "skills.containers": [".codex/skills", ".agents/skills"],
        "skills.include_plugins": False,
        "skills.max_depth": 6,
    },
    "coder": {
        "project_doc.discovery": "roots",
        "project_doc.max_bytes": 2 * 1024 * 1024,
        "project_doc.override_filename": "",
        "project_doc.root_markers": [],
        "project_doc.instruction_dirs": ["~/.coder"],
        "skills.dirs": ["~/.coder/skills"],
        "skills.containers": ["skills", ".agents/skills", ".claude/skills", ".codex/skills"],
        "skills.validation": "coder",
    },
}


def profile_defaults(profile: str) -> Mapping[str, Any]:
    """Every key with its default under ``profile`` (callers validate the name first)."""
    return {**_COMMON, **_OVERRIDES[profile]}


KEYS: tuple[str, ...] = tuple(_COMMON)
