"""Settings: a profile's defaults, then the repository's file, the user's, the environment, flags.

Precedence, lowest first:

1. the profile's defaults (:mod:`agentcontext.settings.profiles`);
2. the project's ``agentcontext.toml`` at the project root: **hostile input**, so each key is
   checked against its repository rule (:mod:`agentcontext.settings.declared`); a key that would widen
   what is read or run (trust, home and skill directories, sources, caps above the default...)
   is ignored with a warning naming it, and so is a key the file gets wrong (a broken repository
   config never stops a scan);
3. the user's file: ``--config FILE``, else ``$XDG_CONFIG_HOME/agentcontext/config.toml``;
4. Coder's ``CODER_AGENT_EXP_*`` variables, as aliases;
5. ``AGENTCONTEXT_<SECTION>_<KEY>`` variables (lists are comma separated);
6. explicit overrides (command-line flags).

The profile itself is chosen by the same order. Every value remembers where it came
from, for ``agentcontext config show``. Whitespace-only variables count as unset.
``--config /dev/null`` reads no file at all.
"""

from __future__ import annotations

import errno
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agentcontext.errors import ConfigError
from agentcontext.fs.files import EntryKind, Reader
from agentcontext.fs.paths import absolute, find_project_root
from agentcontext.settings.declared import BY_KEY, RepoRule, Setting, check_name, outside_reason
from agentcontext.settings.profiles import KEYS, PROFILES, profile_defaults

MAX_CONFIG_BYTES = 1 << 20  # a settings file is a few hundred bytes; a huge one is not read whole

Validation = Literal["lenient", "codex", "spec", "coder", "claude", "gemini", "opencode", "copilot"]
VALIDATIONS: tuple[str, ...] = BY_KEY["skills.validation"].choices

CODER_ALIASES = {
    "CODER_AGENT_EXP_INSTRUCTIONS_DIRS": "project_doc.instruction_dirs",
    "CODER_AGENT_EXP_INSTRUCTIONS_FILE": "project_doc.filename",
    "CODER_AGENT_EXP_SKILLS_DIRS": "skills.dirs",
    "CODER_AGENT_EXP_SKILL_META_FILE": "skills.meta_file",
    "CODER_AGENT_EXP_MCP_CONFIG_FILES": "mcp.config_files",
}


def env_name(key: str) -> str:
    """The environment variable that sets ``key``: ``skills.max_depth`` -> ``AGENTCONTEXT_SKILLS_MAX_DEPTH``."""
    return BY_KEY[key].env


@dataclass(frozen=True, slots=True)
class ProjectDocSettings:
    discovery: Literal["chain", "roots", "claude", "gemini", "cursor", "opencode", "copilot"]
    max_bytes: int  # -1: no budget (Claude Code)
    filename: str
    override_filename: str
    fallback_filenames: tuple[str, ...]
    root_markers: tuple[str, ...]
    instruction_dirs: tuple[str, ...]
    sanitize: bool
    keep_bytes: bool = False  # send files' bytes as they are: BOM and CRLF kept (Codex)
    import_depth: int = 5  # ``@`` imports: a file this many imports deep is not loaded (Claude Code)
    nested_max_dirs: int = 0  # folders below the work dir searched for on-demand files (0: none)
    child_projects: int = 64  # immediate children with ``.git`` listed as child projects (0: none)

    @property
    def candidates(self) -> tuple[str, ...]:
        """Names tried in each chain directory, in precedence order, without blanks or repeats."""
        names = (self.override_filename, self.filename, *self.fallback_filenames)
        return tuple(dict.fromkeys(name.strip() for name in names if name.strip()))

    @property
    def root_names(self) -> tuple[str, ...]:
        """Names read at a scan root's top level in ``roots`` discovery."""
        names = (self.filename, *self.fallback_filenames)
        return tuple(dict.fromkeys(name.strip() for name in names if name.strip()))


@dataclass(frozen=True, slots=True)
class SkillSettings:
    enabled: bool
    dirs: tuple[str, ...]
    include_plugins: bool
    plugin_cache: str
    containers: tuple[str, ...]
    validation: Validation
    max_depth: int
    max_dirs_per_root: int
    meta_file: str
    disabled: tuple[str, ...]
    precedence: Literal["first", "user", "last", "none"] = "first"  # who wins a name: first root, user, last, nobody
    system_dir: str = ""  # skills the agent ships itself (scope system)
    user_links: Literal["home", "folders", "all"] = "home"  # how far the user's own links lead (module docs)
    inside_skills: bool = False  # a skill's folder is searched for more skills (Codex)
    container_skill: Literal["ignored", "also", "only"] = "ignored"  # a SKILL.md right in a container (module docs)
    linked_skill_md: bool = True  # a SKILL.md that is a symlink is read (Codex lists no such skill)
    plugin_manifests: bool = False  # a skill below a plugin's manifest is named <plugin>:<name> (Codex)
    openai_policy: bool = False  # a skill folder's agents/openai.yaml policy may keep it out of the list (Codex)
    commands: Literal["off", "claude", "copilot"] = "off"  # custom commands listed as skills, by whose rules
    command_dirs: tuple[str, ...] = ()  # the user's custom command folders (Claude Code)


@dataclass(frozen=True, slots=True)
class SnapshotSettings:
    max_resource_bytes: int
    max_snapshot_bytes: int
    max_resources: int


@dataclass(frozen=True, slots=True)
class McpSettings:
    config_files: tuple[str, ...]
    unset_variables: Literal["strict", "lenient"]
    connect_timeout: float
    call_timeout: float
    max_output_bytes: int
    trust: Literal["auto", "approve"]
    max_concurrent_connects: int
    inherit_env: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AgentSettings:
    debounce_ms: int
    push_home_files: bool = True  # False: what was read from the user's home stays out of pushes
    discovered_watch_cap: int = 512  # folders watched for discovered files (0: none, heartbeats only)


@dataclass(frozen=True, slots=True)
class OnDemandSettings:
    """Limits of one on-demand lookup (:mod:`agentcontext.instructions.ondemand`)."""

    max_paths: int = 32
    max_depth: int = 64
    max_bytes: int = 1024 * 1024
    timeout: float = 3.0
    miss_ttl: float = 600.0


@dataclass(frozen=True, slots=True)
class McpServerSettings:
    """Output budgets of ``agentcontext mcp``."""

    catalog_chars: int
    max_file_lines: int
    max_file_bytes: int


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """The control plane's own (``agentcontext server``); ``control.settings.ControlSettings`` is made of them."""

    chat_suffix: str
    disable_context_sync: bool
    offline_after: float
    sweep_every: float
    recheck_every: float
    auth_ttl: float
    store_in_threads: bool
    mcp_sessions_per_user: int
    mcp_session_idle: float
    agent_networks: tuple[str, ...]  # empty: the default list


@dataclass(frozen=True, slots=True)
class Config:
    """Effective settings. Paths stay as configured; they are resolved per scan."""

    profile: str
    home: str
    sources: tuple[str, ...]
    agents: tuple[str, ...]  # the team's AI agents (profiles) for ``audit``; empty: all
    project_doc: ProjectDocSettings
    skills: SkillSettings
    snapshot: SnapshotSettings
    mcp: McpSettings
    agent: AgentSettings
    mcp_server: McpServerSettings
    server: ServerSettings
    ondemand: OnDemandSettings = OnDemandSettings()
    origins: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    project_file: str | None = field(default=None, compare=False)  # the repository's agentcontext.toml
    user_file: str | None = field(default=None, compare=False)  # --config, else the user's config.toml
    warnings: tuple[str, ...] = field(default=(), compare=False)  # what was ignored, and why

    def origin(self, key: str) -> str:
        return dict(self.origins).get(key, "default")

    def value(self, key: str) -> Any:
        """A setting by its dotted key."""
        if key in ("profile", "sources", "agents"):
            return getattr(self, key)
        section, name = key.split(".", 1)
        return getattr(getattr(self, section), name)

    def to_dict(self) -> dict[str, Any]:
        """Every key with its effective value and where that value came from."""
        data: dict[str, Any] = {"profile": {"value": self.profile, "from": self.origin("profile")}}
        for key in KEYS:
            value = self.value(key)
            data[key] = {"value": list(value) if isinstance(value, tuple) else value, "from": self.origin(key)}
        return data


@dataclass(frozen=True, slots=True)
class _Layer:
    origin: str
    values: Mapping[str, Any]


def load_config(
    work_dir: str | os.PathLike[str] = ".",
    *,
    config_file: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    repository: bool = True,
) -> Config:
    """Build the effective configuration for a scan of ``work_dir``; without ``repository``, the project's own
    ``agentcontext.toml`` is not read (the control plane's settings, which no repository sets).

    Raises:
        ConfigError: the user's file, a variable or an override has an unknown key or a bad
            value (the repository's own file never raises: its faults are warnings).
    """
    env = dict(os.environ if environ is None else environ)
    home = _home(env)
    overrides = dict(overrides or {})
    work = absolute(work_dir)
    no_files = config_file is not None and os.fspath(config_file) == os.devnull
    user_path, user_values = (None, {}) if no_files else _user_file(config_file, env, home)
    trusted = [
        _Layer(f"file {user_path}", user_values),
        _Layer("coder alias", _coder_aliases(env)),
        _Layer("environment", _agentcontext_env(env)),
        _Layer("flag", overrides),
    ]
    for layer in trusted:
        for key in layer.values:
            if key != "profile" and key not in BY_KEY:
                raise ConfigError(f"unknown setting {key!r}", source=layer.origin)
    warnings: list[str] = []
    project = (None, {}) if no_files or not repository else _project_file(work, env, user_values, user_path, warnings)
    project_path, project_values = project
    profile, profile_origin = _choose_profile(trusted, project_values, project_path, warnings)
    defaults = profile_defaults(profile)
    values = {key: _coerce(BY_KEY[key], raw, f"profile {profile}") for key, raw in defaults.items()}
    origins: dict[str, str] = {"profile": profile_origin}
    agent_origin, agent_values = _agent_settings(profile, env, home, warnings)
    for key, raw in agent_values.items():  # the agent's own user settings replace the profile's defaults
        values[key] = _coerce(BY_KEY[key], raw, agent_origin)
        origins[key] = agent_origin
    defaults = {**defaults, **agent_values}  # what a repository may only lower
    if project_path is not None:
        for key, value in _repository_values(project_values, defaults, project_path, warnings).items():
            values[key] = value
            origins[key] = f"project file {project_path}"
    for layer in trusted:
        for key, raw in layer.values.items():
            if key != "profile":
                values[key] = _coerce(BY_KEY[key], raw, layer.origin)
                origins[key] = layer.origin
    if values["skills.include_plugins"] is None:
        values["skills.include_plugins"] = "skills.dirs" not in origins
        origins["skills.include_plugins"] = (
            "default" if values["skills.include_plugins"] else "default (off because skills.dirs is set)"
        )
    files = (project_path, user_path)
    return _build(profile, home, env, values, origins, files, tuple(warnings))


def _agent_settings(profile: str, env: Mapping[str, str], home: str, warnings: list[str]) -> tuple[str, dict[str, Any]]:
    """The agent's own user settings that change what its profile reads (Codex's ``config.toml``), with
    their origin; never a repository's (precedence: docs/instructions.md)."""
    if profile != "codex":
        return "", {}
    from agentcontext.peers.codex import settings as codex_settings  # here: the peers load this module

    found = codex_settings.read(_codex_home(env, home))
    warnings.extend(found.warnings)
    return f"Codex's {found.path}", found.values


def default_config(home: str | None = None) -> Config:
    """The ``default`` profile with nothing read from files or the environment."""
    env = {"HOME": home} if home else {"HOME": os.path.expanduser("~")}
    return load_config(".", environ=env, config_file=os.devnull)


def _home(env: Mapping[str, str]) -> str:
    home = env.get("HOME", "").strip()
    return absolute(home) if home else absolute(os.path.expanduser("~"))


def _choose_profile(
    trusted: list[_Layer], project_values: Mapping[str, Any], project_path: str | None, warnings: list[str]
) -> tuple[str, str]:
    for value, origin in ((layer.values.get("profile"), layer.origin) for layer in reversed(trusted)):
        if value is None:
            continue
        if value not in PROFILES:
            raise ConfigError(f"unknown profile {value!r}; choose one of {', '.join(PROFILES)}", source=origin)
        return str(value), origin
    chosen = project_values.get("profile")
    if chosen is None:
        return "default", "default"
    if chosen not in PROFILES:
        warnings.append(f"{project_path}: profile ignored: unknown profile {chosen!r}")
        return "default", "default"
    return str(chosen), f"project file {project_path}"


def _user_file(
    explicit: str | os.PathLike[str] | None, env: Mapping[str, str], home: str
) -> tuple[str | None, dict[str, Any]]:
    if explicit is not None:
        path = os.fspath(explicit)
        if not os.path.isfile(path):
            raise ConfigError(f"config file not found: {path}")
        return absolute(path), _read_toml(path)
    xdg = env.get("XDG_CONFIG_HOME", "").strip() or os.path.join(home, ".config")
    candidate = os.path.join(xdg, "agentcontext", "config.toml")
    if os.path.isfile(candidate):
        return absolute(candidate), _read_toml(candidate)
    return None, {}


def _project_file(
    work: str, env: Mapping[str, str], user_values: Mapping[str, Any], user_path: str | None, warnings: list[str]
) -> tuple[str | None, dict[str, Any]]:
    """The repository's ``agentcontext.toml``, found with the user's root markers; unreadable is a warning."""
    markers = _markers_hint(env, user_values)
    root = find_project_root(work, markers) or work
    candidate = os.path.join(root, "agentcontext.toml")
    if not os.path.lexists(candidate) or absolute(candidate) == user_path:
        return None, {}
    try:
        return absolute(candidate), _read_toml(candidate, root=root)
    except ConfigError as exc:
        warnings.append(f"{candidate}: ignored: {exc.message}")
        return None, {}


def _markers_hint(env: Mapping[str, str], user_values: Mapping[str, Any]) -> list[str]:
    raw = env.get(env_name("project_doc.root_markers"), "").strip()
    if raw:
        return _split_list(raw)
    configured = user_values.get("project_doc.root_markers")
    if isinstance(configured, list) and all(isinstance(item, str) for item in configured):
        return configured
    return [".git"]


def _repository_values(
    raw_values: Mapping[str, Any], defaults: Mapping[str, Any], path: str, warnings: list[str]
) -> dict[str, Any]:
    """The repository file's values that its rules allow; every other key is a warning."""
    accepted: dict[str, Any] = {}
    for key, raw in raw_values.items():
        if key == "profile":
            continue
        setting = BY_KEY.get(key)
        if setting is None:
            warnings.append(f"{path}: {key!r} ignored: unknown setting")
            continue
        try:
            value = _coerce(setting, raw, path)
        except ConfigError as exc:
            warnings.append(f"{path}: {key} ignored: {exc.message}")
            continue
        refusal = repository_refusal(setting, value, defaults[key])
        if refusal:
            warnings.append(f"{path}: {key} ignored: {refusal}")
            continue
        accepted[key] = value
    return accepted


def repository_refusal(setting: Setting, value: Any, default: Any) -> str | None:
    """Why a repository's config may not give ``setting`` this ``value`` (None when it may)."""
    rule = setting.repo
    if rule is RepoRule.NEVER:
        return "a repository's config may not set it (only your own config, the environment or a flag)"
    if rule is RepoRule.LOWER and _above(value, default, setting.unbounded):
        return f"a repository's config may lower it, not raise it above {default}"
    if rule is RepoRule.NARROW and value != setting.narrow_to and value != default:
        return f"a repository's config may only set it to {_shown(setting.narrow_to)}"
    if rule is RepoRule.INSIDE:
        reasons = [reason for entry in value if (reason := outside_reason(entry))]
        if reasons:
            return reasons[0]
    return None


def _above(value: Any, default: Any, unbounded: int | None) -> bool:
    if unbounded is not None and default == unbounded:
        return False  # nothing is above "no limit"
    return bool(value == unbounded or value > default) if unbounded is not None else bool(value > default)


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return repr(value) if isinstance(value, str) else str(value)


def _read_toml(path: str, *, root: str | None = None) -> dict[str, Any]:
    """A TOML file flattened to dotted keys; with ``root``, read beneath it (a repository's file).

    Raises:
        ConfigError: it cannot be read, is too large or is not TOML.
    """
    try:
        if root is None:
            with open(path, "rb") as fh:
                raw = fh.read(MAX_CONFIG_BYTES + 1)
        else:
            raw = _read_beneath(path, root)
        if len(raw) > MAX_CONFIG_BYTES:
            raise ConfigError(f"cannot read config: larger than {MAX_CONFIG_BYTES} bytes", source=path)
        data = tomllib.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read config: {exc}", source=path) from exc
    except RecursionError:  # tomllib recurses into nested arrays and tables
        raise ConfigError("cannot read config: not TOML (nested too deeply)", source=path) from None
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            for sub, subvalue in value.items():
                flat[f"{key}.{sub}"] = subvalue
        else:
            flat[key] = value
    return flat


def _read_beneath(path: str, root: str) -> bytes:
    """The repository's file, walked to from its root without following a link out (it is hostile input)."""
    reader = Reader()
    try:
        entry = reader.probe(path, root)
        if entry.kind is not EntryKind.FILE:
            raise OSError(errno.EINVAL, entry.error or f"not a regular file ({entry.kind.value})")
        return reader.read(entry, MAX_CONFIG_BYTES + 1)
    finally:
        reader.release()


def _coder_aliases(env: Mapping[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, key in CODER_ALIASES.items():
        raw = env.get(name, "").strip()
        if raw:
            values[key] = raw
    return values


def _agentcontext_env(env: Mapping[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for setting in BY_KEY.values():
        raw = env.get(setting.env)
        if raw is not None and raw.strip() and setting.key != "profile":
            values[setting.key] = raw.strip()
    profile = env.get("AGENTCONTEXT_PROFILE", "").strip()
    if profile:
        values["profile"] = profile
    return values


def _split_list(raw: str) -> list[str]:
    return [part.strip() for part in raw.split(",") if part.strip()]


def _coerce(setting: Setting, raw: Any, origin: str) -> Any:
    key = setting.key
    if setting.nullable and raw is None:
        return None
    if setting.type == "list":
        value: Any = _as_list(key, raw, origin)
        names = value
    elif setting.type == "bool":
        return _as_bool(key, raw, origin)
    elif setting.type == "int":
        return _as_number(setting, raw, origin, int)
    elif setting.type == "float":
        return _as_number(setting, raw, origin, float)
    else:
        if not isinstance(raw, str):
            raise ConfigError(f"{key} must be a string, not {type(raw).__name__}", source=origin)
        if setting.choices and raw not in setting.choices:
            raise ConfigError(f"{key} must be one of {', '.join(setting.choices)}, not {raw!r}", source=origin)
        value, names = raw, [raw] if raw else []
    if setting.names:
        for name in names:
            problem = check_name(name.strip())
            if problem:
                raise ConfigError(f"{key}: {problem}", source=origin)
    return value


def _as_list(key: str, raw: Any, origin: str) -> tuple[str, ...]:
    if isinstance(raw, str):
        return tuple(_split_list(raw))
    if isinstance(raw, list | tuple) and all(isinstance(item, str) for item in raw):
        return tuple(raw)
    raise ConfigError(f"{key} must be a list of strings", source=origin)


def _as_bool(key: str, raw: Any, origin: str) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.lower() in ("1", "true", "yes", "on"):
        return True
    if isinstance(raw, str) and raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{key} must be true or false, not {raw!r}", source=origin)


def _as_number(setting: Setting, raw: Any, origin: str, kind: type[int] | type[float]) -> Any:
    value: int | float | None
    try:
        value = kind(raw) if isinstance(raw, int | float | str) and not isinstance(raw, bool) else None
    except ValueError:
        value = None
    if kind is int and isinstance(raw, float):
        value = None  # 2.5 is not an integer, and silently flooring it would surprise
    low, high = setting.range or (0, 1 << 62)
    if kind is float:
        if value is None or not low < value <= high:
            raise ConfigError(
                f"{setting.key} must be a positive number of seconds, at most {high:g}, not {raw!r}", source=origin
            )
        return value
    if value is None or not low <= value <= high:
        raise ConfigError(f"{setting.key} must be an integer from {low:g} to {high:g}, not {raw!r}", source=origin)
    return int(value)


def _codex_home(env: Mapping[str, str], home: str) -> str:
    value = env.get("CODEX_HOME", "").strip()
    return absolute(value) if value else os.path.join(home, ".codex")


def _claude_dir(env: Mapping[str, str], home: str) -> str:
    value = env.get("CLAUDE_CONFIG_DIR", "").strip()
    return absolute(value) if value else os.path.join(home, ".claude")


# Copilot CLI's folder lists, from the user's environment (a repository cannot set them): comma-separated
_COPILOT_LISTS = ("$COPILOT_CUSTOM_INSTRUCTIONS_DIRS", "$COPILOT_SKILLS_DIRS")


def _expand_homes(values: tuple[str, ...], env: Mapping[str, str], home: str) -> tuple[str, ...]:
    """``$CODEX_HOME`` and ``$CLAUDE_CONFIG_DIR`` at the start of a path, as those agents resolve them;
    ``$COPILOT_CUSTOM_INSTRUCTIONS_DIRS`` and ``$COPILOT_SKILLS_DIRS`` alone: each folder they list."""
    out: list[str] = []
    for item in values:
        if item in _COPILOT_LISTS:
            out += [absolute(p.strip()) for p in env.get(item[1:], "").split(",") if p.strip()]
            continue
        for variable, resolve in (("$CODEX_HOME", _codex_home), ("$CLAUDE_CONFIG_DIR", _claude_dir)):
            if item.startswith(variable):
                item = resolve(env, home) + item[len(variable) :]
        out.append(item)
    return tuple(out)


def _section(values: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The values of one section, by their short names (``ondemand.timeout`` -> ``timeout``)."""
    prefix = name + "."
    return {key[len(prefix) :]: value for key, value in values.items() if key.startswith(prefix)}


def _build(
    profile: str,
    home: str,
    env: Mapping[str, str],
    v: dict[str, Any],
    origins: dict[str, str],
    files: tuple[str | None, str | None],
    warnings: tuple[str, ...],
) -> Config:
    # each section's settings are its dataclass's fields; only the paths under home are expanded here
    project_doc = _section(v, "project_doc") | {
        "instruction_dirs": _expand_homes(v["project_doc.instruction_dirs"], env, home)
    }
    skills = _section(v, "skills") | {
        "dirs": _expand_homes(v["skills.dirs"], env, home),
        "command_dirs": _expand_homes(v["skills.command_dirs"], env, home),
        "system_dir": _expand_homes((v["skills.system_dir"],), env, home)[0],
    }
    return Config(
        profile=profile,
        home=home,
        sources=v["sources"],
        agents=tuple(v["agents"]),
        project_doc=ProjectDocSettings(**project_doc),
        skills=SkillSettings(**skills),
        snapshot=SnapshotSettings(**_section(v, "snapshot")),
        mcp=McpSettings(**_section(v, "mcp")),
        agent=AgentSettings(**_section(v, "agent")),
        mcp_server=McpServerSettings(**_section(v, "mcp_server")),
        server=ServerSettings(**_section(v, "server")),
        ondemand=OnDemandSettings(**_section(v, "ondemand")),
        origins=tuple(sorted(origins.items())),
        project_file=files[0],
        user_file=files[1],
        warnings=warnings,
    )
