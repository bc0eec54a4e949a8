"""The profiles: named sets of defaults, since the peers' rules disagree.

``default``  the AGENTS.md chain from the project root down to the work dir with the
             fallbacks ``CLAUDE.md`` and ``.cursorrules``; lenient skills from every
             known container; Claude Code plugin skills.
``codex``    Codex's rules: the same chain without fallbacks, ``$CODEX_HOME``, the
             ``.codex/skills`` and ``.agents/skills`` containers scanned 6 levels deep.
``claude``   Claude Code's rules (2.1.332 as observed): the CLAUDE.md family walked up to
             ``/``, ``.claude/rules``, ``@`` imports, AGENTS.md only as a whole-walk
             fallback, no doc budget, ``.claude/skills`` named by folder, user beats project.
``gemini``   Gemini CLI's rules (0.61.0 as observed): ``GEMINI.md`` in every folder from the
             project root down to the work dir and ``~/.gemini``, sorted by path, ``@`` imports
             inline, no doc budget; skills in ``~/.gemini/skills``, ``~/.agents/skills`` and the
             work dir's ``.gemini/skills`` and ``.agents/skills``, the work dir's copy winning.
``cursor``   Cursor's rules as its documentation describes them (no binary checked): the
             workspace's ``.cursor/rules/**/*.mdc`` by their frontmatter, ``AGENTS.md``,
             ``CLAUDE.md`` and ``.cursorrules``; a nested ``AGENTS.md`` or ``.cursor/rules`` for
             its folder; no doc budget; skills in ``.cursor/skills`` and ``~/.cursor/skills``.
``opencode`` OpenCode's rules (1.18.33 as observed): ``AGENTS.md`` (else ``CLAUDE.md``, else
             ``CONTEXT.md``, one name for the whole walk) from the work dir up to the worktree
             root, nearest first, after ``~/.config/opencode/AGENTS.md`` or ``~/.claude/CLAUDE.md``,
             then its ``instructions``; no doc budget; skills in ``.claude/skills`` and
             ``.agents/skills`` of every folder of the walk, home and its config folders, nested.
``copilot``  GitHub Copilot CLI's rules (1.0.102 as observed): ``.github/copilot-instructions.md``,
             ``AGENTS.md``, ``CLAUDE.md`` and ``GEMINI.md`` of the project root, the work dir and the
             folders between, ``~/.copilot``, ``.github/instructions`` and ``.claude/rules`` (always
             applied or path-scoped by ``applyTo``), ``COPILOT_CUSTOM_INSTRUCTIONS_DIRS``, no doc budget;
             skills in ``.github/skills``, ``.agents/skills``, ``.claude/skills`` up to the root, then
             ``~/.copilot/skills``, ``~/.agents/skills`` and ``COPILOT_SKILLS_DIRS``, the first copy winning.
``coder``    Coder's rules: shallow scan roots (declared sources, ``~/.coder``, the
             work dir), every instruction name at a root's top level, kebab-case skill
             names that must match their folder, no separate doc budget.

A profile is only defaults: every key can be overridden by the config file or the
environment. Keys are dotted (``section.key``) and declared, with their defaults, in
:mod:`agentcontext.settings.declared`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentcontext.settings.declared import BY_KEY, KEYS, SETTINGS

PROFILES: tuple[str, ...] = BY_KEY["profile"].choices

_COMMON: dict[str, Any] = {setting.key: setting.default for setting in SETTINGS if setting.key != "profile"}

_OVERRIDES: dict[str, dict[str, Any]] = {
    "default": {},
    "codex": {
        "project_doc.fallback_filenames": [],
        "project_doc.sanitize": False,
        "project_doc.keep_bytes": True,
        "skills.dirs": ["$CODEX_HOME/skills", "~/.agents/skills"],
        "skills.system_dir": "$CODEX_HOME/skills/.system",
        "skills.precedence": "none",
        "skills.containers": [".codex/skills", ".agents/skills"],
        "skills.include_plugins": False,
        "skills.max_depth": 6,
        "skills.user_links": "folders",
        "skills.inside_skills": True,
        "skills.container_skill": "also",
        "skills.linked_skill_md": False,
        "skills.plugin_manifests": True,
        "skills.openai_policy": True,
        "skills.validation": "codex",
    },
    "claude": {
        "project_doc.discovery": "claude",
        "project_doc.max_bytes": -1,
        "project_doc.filename": "CLAUDE.md",
        "project_doc.override_filename": "",
        "project_doc.fallback_filenames": ["AGENTS.md", ".claude/AGENTS.md"],
        "project_doc.instruction_dirs": ["$CLAUDE_CONFIG_DIR"],
        "project_doc.sanitize": False,
        "project_doc.nested_max_dirs": 2000,
        "skills.dirs": ["$CLAUDE_CONFIG_DIR/skills"],
        "skills.containers": [".claude/skills"],
        "skills.include_plugins": False,
        "skills.validation": "claude",
        "skills.precedence": "user",
        "skills.user_links": "all",
        "skills.commands": "claude",
        "skills.command_dirs": ["$CLAUDE_CONFIG_DIR/commands"],
    },
    "gemini": {
        "project_doc.discovery": "gemini",
        "project_doc.max_bytes": -1,
        "project_doc.filename": "GEMINI.md",
        "project_doc.override_filename": "",
        "project_doc.fallback_filenames": [],
        "project_doc.instruction_dirs": ["~/.gemini"],
        "project_doc.sanitize": False,
        "skills.dirs": ["~/.gemini/skills", "~/.agents/skills"],
        "skills.containers": [".gemini/skills", ".agents/skills"],
        "skills.include_plugins": False,
        "skills.validation": "gemini",
        "skills.precedence": "last",
    },
    "cursor": {
        "project_doc.discovery": "cursor",
        "project_doc.max_bytes": -1,
        "project_doc.override_filename": "",
        "project_doc.fallback_filenames": ["CLAUDE.md", ".cursorrules"],
        "project_doc.instruction_dirs": [],
        "project_doc.sanitize": False,
        "skills.dirs": ["~/.cursor/skills"],
        "skills.containers": [".cursor/skills"],
        "skills.include_plugins": False,
        "mcp.config_files": [".cursor/mcp.json"],
    },
    "opencode": {
        "project_doc.discovery": "opencode",
        "project_doc.max_bytes": -1,
        "project_doc.filename": "AGENTS.md",
        "project_doc.override_filename": "",
        "project_doc.fallback_filenames": ["CLAUDE.md", "CONTEXT.md"],
        "project_doc.instruction_dirs": ["~/.config/opencode", "~/.claude"],
        "project_doc.sanitize": False,
        "skills.dirs": ["~/.claude/skills", "~/.agents/skills"],
        "skills.containers": [".claude/skills", ".agents/skills"],
        "skills.include_plugins": False,
        "skills.validation": "opencode",
        "skills.precedence": "last",
        "skills.max_depth": 6,
    },
    "copilot": {
        "project_doc.discovery": "copilot",
        "project_doc.max_bytes": -1,
        "project_doc.filename": "AGENTS.md",
        "project_doc.override_filename": "",
        "project_doc.fallback_filenames": ["CLAUDE.md", "GEMINI.md"],
        "project_doc.instruction_dirs": ["~/.copilot", "$COPILOT_CUSTOM_INSTRUCTIONS_DIRS"],
        "project_doc.sanitize": False,
        "skills.dirs": ["~/.copilot/skills", "~/.agents/skills", "$COPILOT_SKILLS_DIRS"],
        "skills.containers": [".github/skills", ".agents/skills", ".claude/skills"],
        "skills.include_plugins": False,
        "skills.validation": "copilot",
        "skills.precedence": "user",
        "skills.max_depth": 6,
        "skills.commands": "copilot",
        "skills.container_skill": "only",
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


__all__ = ["KEYS", "PROFILES", "profile_defaults"]
