"""Every setting, declared once: key, type, default, meaning, and what a repository may do with it.

The profiles (:mod:`agentcontext.settings.profiles`) only change defaults; the loader
(:mod:`agentcontext.settings.config`) coerces and layers values by these declarations; the
reference in ``docs/configuration.md`` is generated from them.

A repository's own ``agentcontext.toml`` is hostile input. Each setting carries a rule for it:

``free``    any valid value: it only changes how the repository's own files are judged;
``lower``   a number no higher than the profile's default (caps, limits and timeouts can be
            tightened, never raised);
``narrow``  only the value that reads or runs less (``skills.enabled = false``);
``inside``  paths relative to the repository that stay inside it (no ``..``, ``~`` or ``/``);
``never``   nothing: only the user's config, the environment or a flag may set it (trust,
            home and skill directories, sources, root markers, and file names, since
            those are read in the user's home directories too: ``filename = "auth.json"``
            would read ``~/.codex/auth.json``).

A value a repository may not set is ignored with a warning naming the key.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

ValueType = Literal["str", "bool", "int", "float", "list"]


class RepoRule(StrEnum):
    FREE = "free"
    LOWER = "lower"
    NARROW = "narrow"
    INSIDE = "inside"
    NEVER = "never"


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting. ``default`` is the ``default`` profile's; ``narrow_to`` the value a repository may choose."""

    key: str
    type: ValueType
    default: Any
    description: str
    repo: RepoRule
    choices: tuple[str, ...] = ()
    range: tuple[float, float] | None = None
    names: bool = False  # file names: one path component each, checked in every layer
    narrow_to: Any = None
    nullable: bool = False  # ``None`` means "decided from other settings"
    unbounded: int | None = None  # the value meaning "no limit" (above every other)
    variable: str | None = None  # a variable named before the key was declared here, kept

    @property
    def section(self) -> str:
        return self.key.split(".", 1)[0] if "." in self.key else ""

    @property
    def env(self) -> str:
        """The variable that sets this key: ``skills.max_depth`` -> ``AGENTCONTEXT_SKILLS_MAX_DEPTH``."""
        return self.variable or "AGENTCONTEXT_" + self.key.upper().replace(".", "_")


_TB = float(1 << 40)


def _s(key: str, type_: ValueType, default: Any, repo: RepoRule, description: str, **extra: Any) -> Setting:
    return Setting(key, type_, default, description, repo, **extra)


FREE, LOWER, NARROW, INSIDE, NEVER = RepoRule

SETTINGS: tuple[Setting, ...] = (
    _s(
        "profile",
        "str",
        "default",
        FREE,
        "Rules to apply: a named set of defaults (a profile's defaults are ours, not the repository's).",
        choices=("default", "codex", "coder", "claude", "gemini", "cursor", "opencode", "copilot"),
    ),
    _s("sources", "list", [], NEVER, "Extra directories (or files) to read shallowly, scope `source`."),
    _s(
        "agents",
        "list",
        [],
        NEVER,
        "The AI agents (profiles) your team uses, which `audit` compares for `agent-blind-spot` findings;"
        " empty: every agent.",
    ),
    _s(
        "project_doc.discovery",
        "str",
        "chain",
        NEVER,
        "`chain`: the project root down to the work dir (Codex); `roots`: shallow scan roots (Coder);"
        " `claude`: the CLAUDE.md family up to `/`, rules and imports (Claude Code);"
        " `gemini`: every name of each folder from the project root down, sorted, imports inline (Gemini CLI);"
        " `cursor`: the workspace's `.cursor/rules`, AGENTS.md, CLAUDE.md and `.cursorrules` (Cursor, as documented);"
        " `opencode`: one name for the whole walk from the work dir up, nearest first, and `instructions` (OpenCode);"
        " `copilot`: `.github/copilot-instructions.md`, every name of the root, the work dir and the folders"
        " between, then `.github/instructions` and `.claude/rules` (GitHub Copilot CLI).",
        choices=("chain", "roots", "claude", "gemini", "cursor", "opencode", "copilot"),
    ),
    _s(
        "project_doc.max_bytes",
        "int",
        32 * 1024,
        LOWER,
        "One byte budget for the whole project doc; 0 disables project docs, -1 means no budget (claude).",
        range=(-1, _TB),
        unbounded=-1,
    ),
    _s("project_doc.filename", "str", "AGENTS.md", NEVER, "The instruction file read in each directory.", names=True),
    _s(
        "project_doc.override_filename",
        "str",
        "AGENTS.override.md",
        NEVER,
        "A file that wins over `filename` in its directory; empty for none.",
        names=True,
    ),
    _s(
        "project_doc.fallback_filenames",
        "list",
        ["CLAUDE.md", ".cursorrules"],
        NEVER,
        "Names tried, in order, in a directory without `filename`.",
        names=True,
    ),
    _s(
        "project_doc.root_markers",
        "list",
        [".git"],
        NEVER,
        "Names (files or folders) marking the project root; `[]` searches the work dir alone.",
    ),
    _s(
        "project_doc.instruction_dirs",
        "list",
        ["$CODEX_HOME"],
        NEVER,
        "Home instruction directories, read before the project doc.",
    ),
    _s(
        "project_doc.sanitize",
        "bool",
        True,
        NARROW,
        "Pass the doc through the prompt sanitizer (hidden characters, HTML comments).",
        narrow_to=True,
    ),
    _s(
        "project_doc.keep_bytes",
        "bool",
        False,
        FREE,
        "Send files' bytes as they are: a BOM and CRLF kept (Codex does).",
    ),
    _s(
        "project_doc.import_depth",
        "int",
        5,
        LOWER,
        "`@` imports (claude): a file this many imports deep is not loaded; the importing file is 0.",
        range=(1, 64),
    ),
    _s(
        "project_doc.nested_max_dirs",
        "int",
        0,
        LOWER,
        "Folders below the work dir searched for instruction files that load on demand (0: none).",
        range=(0, 1_000_000),
    ),
    _s(
        "project_doc.child_projects",
        "int",
        64,
        LOWER,
        "Immediate children of the work dir holding `.git` that are listed as child projects (0: none).",
        range=(0, 10_000),
    ),
    _s(
        "ondemand.max_paths",
        "int",
        32,
        LOWER,
        "Paths one on-demand lookup may ask about (`applicable()`, `get_instructions_for`, the agent).",
        range=(1, 10_000),
    ),
    _s(
        "ondemand.max_depth",
        "int",
        64,
        LOWER,
        "Folders below the work dir (or a source) a looked-up path may lie; a deeper one is refused.",
        range=(1, 4096),
    ),
    _s(
        "ondemand.max_bytes",
        "int",
        1024 * 1024,
        LOWER,
        "Content bytes of one on-demand answer; files past it are listed `excluded`.",
        range=(1, _TB),
    ),
    _s(
        "ondemand.timeout",
        "float",
        3.0,
        LOWER,
        "Seconds one on-demand lookup may take before it gives up and says so.",
        range=(0.0, 3600.0),
    ),
    _s(
        "ondemand.miss_ttl",
        "float",
        600.0,
        LOWER,
        "Seconds a folder found without instruction files is remembered (while its own entry is unchanged).",
        range=(0.0, 86_400.0),
    ),
    _s("skills.enabled", "bool", True, NARROW, "Discover skills at all.", narrow_to=False),
    _s(
        "skills.dirs",
        "list",
        ["~/.agents/skills", "~/.codex/skills", "~/.claude/skills"],
        NEVER,
        "The user's skill directories (setting it replaces them, and turns plugins off by default).",
    ),
    _s(
        "skills.include_plugins",
        "bool",
        None,
        NARROW,
        "Read Claude Code plugin skills; by default on unless `skills.dirs` is set.",
        narrow_to=False,
        nullable=True,
    ),
    _s("skills.plugin_cache", "str", "~/.claude/plugins/cache", NEVER, "Where Claude Code keeps installed plugins."),
    _s(
        "skills.containers",
        "list",
        [".agents/skills", ".codex/skills", ".claude/skills", "skills"],
        INSIDE,
        "Skill folders looked for in each project directory, in precedence order.",
    ),
    _s(
        "skills.validation",
        "str",
        "lenient",
        FREE,
        "`lenient` (the Agent Skills guidance), `codex` (lenient, for a SKILL.md that is UTF-8 from its first byte)"
        ", `spec` (skills-ref exactly), `coder` (kebab-case names matching their folder)"
        " `claude` (named by folder, first body line as a fallback description)"
        ", `gemini` (frontmatter name and description both required, taken as written)"
        ", `opencode` (YAML frontmatter with a string name and description, else dropped)"
        " or `copilot` (frontmatter required; name from it or the folder, spaces made `-`; body as a fallback"
        " description).",
        choices=("lenient", "codex", "spec", "coder", "claude", "gemini", "opencode", "copilot"),
    ),
    _s(
        "skills.max_depth",
        "int",
        1,
        LOWER,
        "How deep a skill container is searched: 1 = its immediate children, at most 6.",
        range=(1, 6),
    ),
    _s(
        "skills.max_dirs_per_root",
        "int",
        2000,
        LOWER,
        "Folders visited per skill container, at most.",
        range=(1, 1_000_000),
    ),
    _s("skills.meta_file", "str", "SKILL.md", NEVER, "The file that makes a folder a skill.", names=True),
    _s("skills.disabled", "list", [], FREE, "Skill names turned off, every copy of them."),
    _s(
        "skills.precedence",
        "str",
        "first",
        NEVER,
        "Who wins a skill name: `first` root in order, the `user`'s copy (claude), the `last` root's copy"
        " (gemini: the work dir's; opencode: the last read), or `none` (codex: every copy); `user` compares names"
        " exactly (copilot: the first copy wins).",
        choices=("first", "user", "last", "none"),
    ),
    _s(
        "skills.system_dir",
        "str",
        "",
        NEVER,
        "Skills the agent ships itself, listed with scope `system` (codex: `$CODEX_HOME/skills/.system`).",
    ),
    _s(
        "skills.user_links",
        "str",
        "home",
        NEVER,
        "Where the user's own links may lead: `home` (a link in a user skill dir stays in home), `folders`"
        " (codex: a user skill dir or a skill folder in it that is a symlink is read where it points, which"
        " becomes its own boundary), `all` (claude: a linked SKILL.md too). A repository's links never leave it.",
        choices=("home", "folders", "all"),
    ),
    _s(
        "skills.linked_skill_md",
        "bool",
        True,
        NEVER,
        "Read a `SKILL.md` that is a symlink (inside the boundary); codex: false, Codex lists no such skill.",
    ),
    _s(
        "skills.plugin_manifests",
        "bool",
        False,
        NEVER,
        "Name a skill `<plugin>:<name>` when a folder at or above it (within its root) holds a plugin's"
        " `.codex-plugin/plugin.json` or `.claude-plugin/plugin.json` (codex: true, as Codex does).",
    ),
    _s(
        "skills.openai_policy",
        "bool",
        False,
        NEVER,
        "Leave out (`disabled`) a skill whose folder's `agents/openai.yaml` sets"
        " `policy.allow_implicit_invocation: false` (codex: true, as Codex does).",
    ),
    _s(
        "skills.commands",
        "str",
        "off",
        NEVER,
        "Custom commands (`.claude/commands/*.md`, one file each) listed as skills, by whose rules: `claude`"
        " (in the work dir's `.claude/commands` and each above it to the root, and `skills.command_dirs`; every"
        " `.md` below them, named by its path with `:` for `/`) or `copilot` (the work dir's and those above it,"
        " only the files right in them, named and described as its skills are); `off` reads none.",
        choices=("off", "claude", "copilot"),
    ),
    _s(
        "skills.command_dirs",
        "list",
        [],
        NEVER,
        "The user's custom command folders, read before the project's when `skills.commands` is on"
        " (claude: `$CLAUDE_CONFIG_DIR/commands`).",
    ),
    _s(
        "skills.container_skill",
        "str",
        "ignored",
        NEVER,
        "A `SKILL.md` right in a skills container: `ignored` (claude), `also` a skill, beside the skills below"
        " it (codex), or `only`: the container is that one skill and nothing below it is looked at (copilot).",
        choices=("ignored", "also", "only"),
    ),
    _s(
        "skills.inside_skills",
        "bool",
        False,
        NEVER,
        "Look for skills inside a skill's folder too, down to `skills.max_depth` (codex).",
    ),
    _s(
        "snapshot.max_resource_bytes",
        "int",
        64 * 1024,
        LOWER,
        "Per-resource cap: a larger file is `oversize` and carries no content.",
        range=(1, _TB),
    ),
    _s(
        "snapshot.max_snapshot_bytes",
        "int",
        2 * 1024 * 1024,
        LOWER,
        "Content bytes of a whole snapshot; past it resources are `excluded`.",
        range=(1, _TB),
    ),
    _s(
        "snapshot.max_resources",
        "int",
        500,
        LOWER,
        "Resources in a snapshot; past it they are `excluded`.",
        range=(1, 1_000_000),
    ),
    _s("mcp.config_files", "list", [".mcp.json"], INSIDE, "MCP config files of the work dir, in order."),
    _s(
        "mcp.unset_variables",
        "str",
        "strict",
        NARROW,
        "`strict`: a server whose `${VAR}` is unset is invalid; `lenient`: it gets an empty value.",
        choices=("strict", "lenient"),
        narrow_to="strict",
    ),
    _s(
        "mcp.connect_timeout",
        "float",
        30.0,
        LOWER,
        "Seconds for an upstream MCP server's connect, initialize and first tool list.",
        range=(0.0, 86_400.0),
    ),
    _s("mcp.call_timeout", "float", 60.0, LOWER, "Seconds for one upstream tool call.", range=(0.0, 86_400.0)),
    _s(
        "mcp.max_output_bytes",
        "int",
        1024 * 1024,
        LOWER,
        "An upstream tool result larger than this is cut, with a visible marker.",
        range=(1, _TB),
    ),
    _s(
        "mcp.trust",
        "str",
        "approve",
        NEVER,
        "`approve`: a project's MCP server starts only once you approved what it runs (its entry, the program as"
        " resolved, its cwd and the repository files it runs; `agentcontext mcp trust`, the dashboard, or `up`'s"
        " question); `auto`: every server starts (for environments whose operator vouches for the repository).",
        choices=("auto", "approve"),
    ),
    _s(
        "mcp.inherit_env",
        "list",
        [],
        NEVER,
        "Variables of your environment handed to the workspace's MCP servers besides the usual ones (`HOME`, `PATH`,"
        " `USER`, `LOGNAME`, `SHELL`, `TERM`, the locale, `TZ`, `TMPDIR`, the XDG folders, proxies and CA bundles);"
        " names or patterns such as `AWS_*`. agentcontext's own (`AGENTCONTEXT_*`) are never handed on.",
    ),
    _s(
        "mcp.max_concurrent_connects",
        "int",
        8,
        LOWER,
        "Upstream MCP servers connecting at once.",
        range=(1, 1024),
    ),
    _s(
        "agent.debounce_ms",
        "int",
        250,
        NEVER,  # it paces the re-lists and pushes a flooding MCP server causes: a repository must not lower it
        "Milliseconds the agent waits for file changes and upstream MCP notices to settle before acting on them.",
        range=(0, 60_000),
    ),
    _s(
        "agent.discovered_watch_cap",
        "int",
        512,
        NEVER,  # each folder is an inotify watch of the user's: a repository must not raise it
        "Folders the agent watches for the instruction files its chats discovered on demand (nested AGENTS.md,"
        " CLAUDE.md, rules), so an edit reaches them within the debounce; past it the control plane rechecks"
        " them on the agent's heartbeats instead.",
        range=(0, 100_000),
    ),
    _s(
        "agent.push_home_files",
        "bool",
        True,
        NARROW,
        "Push what the agent reads from your home (`~/.codex`, `~/.claude`, `~/.agents`: home instructions, your"
        " skills and plugins' skills, your MCP configs) to the control plane, where every user who may see the"
        " workspace sees it; `false` keeps them on this machine (scans and `agentcontext mcp` still read them).",
        narrow_to=False,
    ),
    _s(
        "mcp_server.catalog_chars",
        "int",
        8_000,
        LOWER,
        "Characters of `agentcontext mcp`'s skill catalog (descriptions shorten before a skill is left out).",
        range=(200, 1_000_000),
    ),
    _s(
        "mcp_server.max_file_lines",
        "int",
        1_000,
        LOWER,
        "Lines of a skill file `skills_read` returns at once.",
        range=(1, 1_000_000),
    ),
    _s(
        "mcp_server.max_file_bytes",
        "int",
        128 * 1024,
        LOWER,
        "Bytes of a skill file `skills_read` returns at once.",
        range=(1024, 64 * 1024 * 1024),
    ),
    # the control plane's own (``agentcontext server``, ``control.settings.ControlSettings``): a repository's file
    # is never read by the server, and the rule says so for the file a scan reads
    _s(
        "server.chat_suffix",
        "str",
        "-coderd-chat",
        NEVER,
        "Agents whose name ends with this serve the workspace's chats (case-insensitive).",
    ),
    _s(
        "server.disable_context_sync",
        "bool",
        False,
        NEVER,
        "Answer agents' pushes with 501 so they stop (the deployment kill switch).",
        variable="AGENTCONTEXT_DISABLE_CONTEXT_SYNC",
    ),
    _s(
        "server.offline_after",
        "float",
        45.0,
        NEVER,
        "Seconds without a push or heartbeat before an agent counts as offline.",
        range=(0.0, 86_400.0),
    ),
    _s(
        "server.sweep_every",
        "float",
        5.0,
        NEVER,
        "Seconds between two looks for agents that went silent (and so offline).",
        range=(0.0, 3_600.0),
    ),
    _s(
        "server.recheck_every",
        "float",
        30.0,
        NEVER,
        "Seconds between rechecks of an agent's discovered instruction files on its heartbeats, while its own watch"
        " of them is not whole (past its cap, a new run, an older agent; else every 300 s, and at once when it"
        " says one changed): an edited one marks its chats out of date.",
        range=(0.0, 86_400.0),
    ),
    _s(
        "server.auth_ttl",
        "float",
        2.0,
        NEVER,
        "Seconds between a replica's looks at the database's count of token changes (a checked token is kept"
        " while it stays), and that a dashboard session is trusted: a rotated token stops working on every replica"
        " within that time.",
        range=(0.0, 3_600.0),
    ),
    _s(
        "server.store_in_threads",
        "bool",
        False,
        NEVER,
        "Run all database work in worker threads. By default a PostgreSQL on a Unix socket or loopback gets short"
        " transactions run on the event loop itself (a SQLite file too), cut short and redone in a thread when"
        " they would wait.",
    ),
    _s(
        "server.mcp_sessions_per_user",
        "int",
        32,
        NEVER,
        "Handshake-era MCP sessions (chats over MCP) one user may hold at once; beyond, initialize gets 429.",
        range=(1, 1_000_000),
    ),
    _s(
        "server.mcp_session_idle",
        "float",
        300.0,
        NEVER,
        "Seconds an MCP session may stay without a request or an open stream before it ends.",
        range=(0.0, 86_400.0),
    ),
    _s(
        "server.agent_networks",
        "list",
        [],
        NEVER,
        "Where workspace agents may be called: networks (10.1.0.0/16), addresses or host names (in the variable,"
        " separated by spaces or commas); `default` stands for the default list. Given, it replaces the default:"
        " loopback, 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7 and localhost. A push or heartbeat"
        " advertising another host is refused. Host names are called only when listed.",
        variable="AGENTCONTEXT_AGENT_NETWORKS",
    ),
)

BY_KEY: dict[str, Setting] = {setting.key: setting for setting in SETTINGS}
KEYS: tuple[str, ...] = tuple(setting.key for setting in SETTINGS if setting.key != "profile")


def check_name(value: str) -> str | None:
    """Why ``value`` is not a file name relative to its folder (``CLAUDE.md``, ``.claude/AGENTS.md``), or None."""
    parts = value.split("/")
    if not value or value.startswith("/") or "\\" in value or "\0" in value or any(p in ("", ".", "..") for p in parts):
        return f"{value!r} is not a file name inside its folder"
    return None


def outside_reason(entry: str) -> str | None:
    """Why a configured path is not a relative path inside the repository, or None."""
    text = entry.strip().replace("\\", "/")
    if not text or text.startswith(("/", "~", "$")) or os.path.isabs(text) or (len(text) > 1 and text[1] == ":"):
        return f"{entry!r} is not a path inside the repository"
    if any(part == ".." for part in text.split("/")):
        return f"{entry!r} leaves the repository"
    return None
