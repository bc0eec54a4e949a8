"""Settings: a profile's defaults, then a TOML file, then the environment, then flags.

Precedence, lowest first:

1. the profile's defaults (:mod:`agentcontext.profiles`);
2. one TOML file: ``--config``, else ``agentcontext.toml`` at the project root, else
   ``$XDG_CONFIG_HOME/agentcontext/config.toml`` (the first that exists is used);
3. Coder's ``CODER_AGENT_EXP_*`` variables, as aliases;
4. ``AGENTCONTEXT_<SECTION>_<KEY>`` variables (lists are comma separated);
5. explicit overrides (command-line flags).

The profile itself is chosen by the same order. Every value remembers where it came
from, for ``agentcontext config show``. Whitespace-only variables count as unset.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agentcontext.errors import ConfigError
from agentcontext.paths import absolute, find_project_root
from agentcontext.profiles import KEYS, PROFILES, profile_defaults

Validation = Literal["lenient", "spec", "coder", "claude"]
VALIDATIONS: tuple[str, ...] = ("lenient", "spec", "coder", "claude")

CODER_ALIASES = {
    "CODER_AGENT_EXP_INSTRUCTIONS_DIRS": "project_doc.instruction_dirs",
    "CODER_AGENT_EXP_INSTRUCTIONS_FILE": "project_doc.filename",
    "CODER_AGENT_EXP_SKILLS_DIRS": "skills.dirs",
    "CODER_AGENT_EXP_SKILL_META_FILE": "skills.meta_file",
    "CODER_AGENT_EXP_MCP_CONFIG_FILES": "mcp.config_files",
}

_CHOICES: dict[str, tuple[str, ...]] = {
    "project_doc.discovery": ("chain", "roots", "claude"),
    "skills.precedence": ("first", "user", "none"),
    "skills.validation": VALIDATIONS,
    "mcp.unset_variables": ("strict", "lenient"),
    "mcp.trust": ("auto", "approve"),
}
_INT_RANGES: dict[str, tuple[int, int]] = {
    "project_doc.max_bytes": (-1, 1 << 40),
    "project_doc.import_depth": (1, 64),
    "project_doc.nested_max_dirs": (0, 1_000_000),
    "skills.max_depth": (1, 6),
    "skills.max_dirs_per_root": (1, 1_000_000),
    "snapshot.max_resource_bytes": (1, 1 << 40),
    "snapshot.max_snapshot_bytes": (1, 1 << 40),
    "snapshot.max_resources": (1, 1_000_000),
    "mcp.max_output_bytes": (1, 1 << 40),
    "mcp.max_concurrent_connects": (1, 1024),
    "agent.debounce_ms": (0, 60_000),
    "mcp_server.catalog_chars": (200, 1_000_000),
    "mcp_server.max_file_lines": (1, 1_000_000),
    "mcp_server.max_file_bytes": (1024, 64 * 1024 * 1024),
}


def env_name(key: str) -> str:
    """The environment variable that sets ``key``: ``skills.max_depth`` -> ``AGENTCONTEXT_SKILLS_MAX_DEPTH``."""
    return "AGENTCONTEXT_" + key.upper().replace(".", "_")


@dataclass(frozen=True, slots=True)
class ProjectDocSettings:
    discovery: Literal["chain", "roots", "claude"]
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
    precedence: Literal["first", "user", "none"] = "first"  # who wins a name: first root, user, nobody
    system_dir: str = ""  # skills the agent ships itself (scope system)


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


@dataclass(frozen=True, slots=True)
class AgentSettings:
    debounce_ms: int


@dataclass(frozen=True, slots=True)
class McpServerSettings:
    """Output budgets of ``agentcontext mcp``."""

    catalog_chars: int
    max_file_lines: int
    max_file_bytes: int


@dataclass(frozen=True, slots=True)
class Config:
    """Effective settings. Paths stay as configured; they are resolved per scan."""

    profile: str
    home: str
    sources: tuple[str, ...]
    project_doc: ProjectDocSettings
    skills: SkillSettings
    snapshot: SnapshotSettings
    mcp: McpSettings
    agent: AgentSettings
    mcp_server: McpServerSettings
    origins: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    config_file: str | None = field(default=None, compare=False)

    def origin(self, key: str) -> str:
        return dict(self.origins).get(key, "default")

    def value(self, key: str) -> Any:
        """A setting by its dotted key."""
        if key in ("profile", "sources"):
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


def load_config(
    work_dir: str | os.PathLike[str] = ".",
    *,
    config_file: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Config:
    """Build the effective configuration for a scan of ``work_dir``.

    Raises:
        ConfigError: a file, variable or override has an unknown key or a bad value.
    """
    env = dict(os.environ if environ is None else environ)
    home = _home(env)
    overrides = dict(overrides or {})
    work = absolute(work_dir)
    path, file_values = _find_file(work, config_file, env, home)

    profile, profile_origin = _choose_profile(overrides, env, file_values, path)
    layers: list[tuple[str, Mapping[str, Any]]] = [
        (f"profile {profile}", profile_defaults(profile)),
        (f"file {path}", file_values),
        ("coder alias", _coder_aliases(env)),
        ("environment", _agentcontext_env(env)),
        ("flag", overrides),
    ]
    values: dict[str, Any] = {}
    origins: dict[str, str] = {"profile": profile_origin}
    for origin, layer in layers:
        for key, raw in layer.items():
            if key == "profile":
                continue
            if key not in KEYS:
                raise ConfigError(f"unknown setting {key!r}", source=origin)
            values[key] = _coerce(key, raw, origin)
            origins[key] = origin if not origin.startswith("profile") else "default"
    if values["skills.include_plugins"] is None:
        values["skills.include_plugins"] = origins.get("skills.dirs", "default") == "default"
        origins["skills.include_plugins"] = (
            "default" if values["skills.include_plugins"] else "default (off because skills.dirs is set)"
        )
    return _build(profile, home, env, values, origins, path)


def default_config(home: str | None = None) -> Config:
    """The ``default`` profile with nothing read from files or the environment."""
    env = {"HOME": home} if home else {"HOME": os.path.expanduser("~")}
    return load_config(".", environ=env, config_file=os.devnull)


def _home(env: Mapping[str, str]) -> str:
    home = env.get("HOME", "").strip()
    return absolute(home) if home else absolute(os.path.expanduser("~"))


def _choose_profile(
    overrides: Mapping[str, Any], env: Mapping[str, str], file_values: Mapping[str, Any], path: str | None
) -> tuple[str, str]:
    for value, origin in (
        (overrides.get("profile"), "flag"),
        (env.get("AGENTCONTEXT_PROFILE", "").strip() or None, "environment"),
        (file_values.get("profile"), f"file {path}"),
    ):
        if value is None:
            continue
        if value not in PROFILES:
            raise ConfigError(f"unknown profile {value!r}; choose one of {', '.join(PROFILES)}", source=origin)
        return str(value), origin
    return "default", "default"


def _find_file(
    work: str, explicit: str | os.PathLike[str] | None, env: Mapping[str, str], home: str
) -> tuple[str | None, dict[str, Any]]:
    if explicit is not None:
        path = os.fspath(explicit)
        if path == os.devnull:
            return None, {}
        if not os.path.isfile(path):
            raise ConfigError(f"config file not found: {path}")
        return absolute(path), _read_toml(path)
    markers = _markers_hint(env)
    root = find_project_root(work, markers) or work
    xdg = env.get("XDG_CONFIG_HOME", "").strip() or os.path.join(home, ".config")
    for candidate in (os.path.join(root, "agentcontext.toml"), os.path.join(xdg, "agentcontext", "config.toml")):
        if os.path.isfile(candidate):
            return absolute(candidate), _read_toml(candidate)
    return None, {}


def _markers_hint(env: Mapping[str, str]) -> list[str]:
    raw = env.get(env_name("project_doc.root_markers"), "").strip()
    return _split_list(raw) if raw else [".git"]


def _read_toml(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read config: {exc}", source=path) from exc
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            for sub, subvalue in value.items():
                flat[f"{key}.{sub}"] = subvalue
        else:
            flat[key] = value
    return flat


def _coder_aliases(env: Mapping[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, key in CODER_ALIASES.items():
        raw = env.get(name, "").strip()
        if raw:
            values[key] = raw
    return values


def _agentcontext_env(env: Mapping[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key in KEYS:
        raw = env.get(env_name(key))
        if raw is not None and raw.strip():
            values[key] = raw.strip()
    return values


def _split_list(raw: str) -> list[str]:
    return [part.strip() for part in raw.split(",") if part.strip()]


def _coerce(key: str, raw: Any, origin: str) -> Any:
    default = profile_defaults("default")[key]
    if isinstance(default, list):
        return _as_list(key, raw, origin)
    if isinstance(default, bool) or key == "skills.include_plugins":
        return _as_bool(key, raw, origin)
    if isinstance(default, int):
        return _as_int(key, raw, origin)
    if isinstance(default, float):
        return _as_float(key, raw, origin)
    if not isinstance(raw, str):
        raise ConfigError(f"{key} must be a string, not {type(raw).__name__}", source=origin)
    choices = _CHOICES.get(key)
    if choices and raw not in choices:
        raise ConfigError(f"{key} must be one of {', '.join(choices)}, not {raw!r}", source=origin)
    return raw


def _as_list(key: str, raw: Any, origin: str) -> tuple[str, ...]:
    if isinstance(raw, str):
        return tuple(_split_list(raw))
    if isinstance(raw, list | tuple) and all(isinstance(item, str) for item in raw):
        return tuple(raw)
    raise ConfigError(f"{key} must be a list of strings", source=origin)


def _as_bool(key: str, raw: Any, origin: str) -> bool | None:
    if raw is None or isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.lower() in ("1", "true", "yes", "on"):
        return True
    if isinstance(raw, str) and raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{key} must be true or false, not {raw!r}", source=origin)


def _as_int(key: str, raw: Any, origin: str) -> int:
    try:
        value = int(raw) if isinstance(raw, int | str) and not isinstance(raw, bool) else None
    except ValueError:
        value = None
    low, high = _INT_RANGES.get(key, (0, 1 << 62))
    if value is None or not low <= value <= high:
        raise ConfigError(f"{key} must be an integer from {low} to {high}, not {raw!r}", source=origin)
    return value


def _as_float(key: str, raw: Any, origin: str) -> float:
    try:
        value = float(raw) if isinstance(raw, int | float | str) and not isinstance(raw, bool) else -1.0
    except ValueError:
        value = -1.0
    if value <= 0:
        raise ConfigError(f"{key} must be a positive number of seconds, not {raw!r}", source=origin)
    return value


def _codex_home(env: Mapping[str, str], home: str) -> str:
    value = env.get("CODEX_HOME", "").strip()
    return absolute(value) if value else os.path.join(home, ".codex")


def _claude_dir(env: Mapping[str, str], home: str) -> str:
    value = env.get("CLAUDE_CONFIG_DIR", "").strip()
    return absolute(value) if value else os.path.join(home, ".claude")


def _expand_homes(values: tuple[str, ...], env: Mapping[str, str], home: str) -> tuple[str, ...]:
    """``$CODEX_HOME`` and ``$CLAUDE_CONFIG_DIR`` at the start of a path, as those agents resolve them."""
    out: list[str] = []
    for item in values:
        for variable, resolve in (("$CODEX_HOME", _codex_home), ("$CLAUDE_CONFIG_DIR", _claude_dir)):
            if item.startswith(variable):
                item = resolve(env, home) + item[len(variable) :]
        out.append(item)
    return tuple(out)


def _build(
    profile: str,
    home: str,
    env: Mapping[str, str],
    v: dict[str, Any],
    origins: dict[str, str],
    path: str | None,
) -> Config:
    return Config(
        profile=profile,
        home=home,
        sources=v["sources"],
        project_doc=ProjectDocSettings(
            discovery=v["project_doc.discovery"],
            max_bytes=v["project_doc.max_bytes"],
            filename=v["project_doc.filename"],
            override_filename=v["project_doc.override_filename"],
            fallback_filenames=v["project_doc.fallback_filenames"],
            root_markers=v["project_doc.root_markers"],
            instruction_dirs=_expand_homes(v["project_doc.instruction_dirs"], env, home),
            sanitize=v["project_doc.sanitize"],
            keep_bytes=v["project_doc.keep_bytes"],
            import_depth=v["project_doc.import_depth"],
            nested_max_dirs=v["project_doc.nested_max_dirs"],
        ),
        skills=SkillSettings(
            enabled=v["skills.enabled"],
            dirs=_expand_homes(v["skills.dirs"], env, home),
            include_plugins=v["skills.include_plugins"],
            plugin_cache=v["skills.plugin_cache"],
            containers=v["skills.containers"],
            validation=v["skills.validation"],
            max_depth=v["skills.max_depth"],
            max_dirs_per_root=v["skills.max_dirs_per_root"],
            meta_file=v["skills.meta_file"],
            disabled=v["skills.disabled"],
            precedence=v["skills.precedence"],
            system_dir=_expand_homes((v["skills.system_dir"],), env, home)[0],
        ),
        snapshot=SnapshotSettings(
            max_resource_bytes=v["snapshot.max_resource_bytes"],
            max_snapshot_bytes=v["snapshot.max_snapshot_bytes"],
            max_resources=v["snapshot.max_resources"],
        ),
        mcp=McpSettings(
            config_files=v["mcp.config_files"],
            unset_variables=v["mcp.unset_variables"],
            connect_timeout=v["mcp.connect_timeout"],
            call_timeout=v["mcp.call_timeout"],
            max_output_bytes=v["mcp.max_output_bytes"],
            trust=v["mcp.trust"],
            max_concurrent_connects=v["mcp.max_concurrent_connects"],
        ),
        agent=AgentSettings(debounce_ms=v["agent.debounce_ms"]),
        mcp_server=McpServerSettings(
            catalog_chars=v["mcp_server.catalog_chars"],
            max_file_lines=v["mcp_server.max_file_lines"],
            max_file_bytes=v["mcp_server.max_file_bytes"],
        ),
        origins=tuple(sorted(origins.items())),
        config_file=path,
    )
