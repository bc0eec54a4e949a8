"""The plan of a scan: which directories and files it may look at, and in what order.

Each agent's peer (:mod:`agentcontext.peers`) lays out its scan with one of two plans:

:func:`chain_layout` (Codex, the default profile, Claude Code)
    home instruction dirs, then declared sources, then every directory from the project
    root down to the work dir. Skills come from the containers of each chain directory
    (scope ``repo``), of each source, then the user's skill dirs, then the system dir, then
    plugins; or, for an agent that reads the user's skills first (Claude Code), the user's
    dirs, then the work dir's containers upward, then the sources.

:func:`roots_layout` (Coder)
    shallow scan roots in Coder's order: declared sources, the home instruction dirs
    (``~/.coder``), the user's skill dirs (``~/.coder/skills``), the plugin cache, and the
    work dir last. Each root's top level is read; nothing below it, nothing above it.

Custom commands (``skills.commands``, :mod:`agentcontext.skills.commands`) come from
:attr:`Layout.command_folders`: the user's command dirs, then ``.claude/commands`` of the work dir
and of each folder above it to the project root.

Order is precedence: the first root to offer a skill name wins it. Every root carries
the boundary its symlinks must stay inside.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from agentcontext.fs.files import is_within
from agentcontext.fs.paths import Accept, absolute, boundary_for, chain, find_project_root, resolve_all
from agentcontext.resource import Scope
from agentcontext.settings.config import Config


@dataclass(frozen=True, slots=True)
class Root:
    """A directory the scan reads: instruction files at its top level, or skills below it."""

    path: str
    scope: Scope
    boundary: str
    source: str | None = None
    follows: bool = False  # the user's own skill dir: its links may lead out of its boundary (skills.user_links)


@dataclass(frozen=True, slots=True)
class McpFile:
    path: str
    scope: Scope
    boundary: str
    connect: bool
    source: str | None = None


@dataclass(frozen=True, slots=True)
class Layout:
    work_dir: str
    project_root: str | None
    chain: tuple[str, ...]
    home_dirs: tuple[Root, ...]  # instruction dirs: one file each, before the project
    source_roots: tuple[Root, ...]  # declared sources that are directories
    source_files: tuple[Root, ...]  # declared sources that are files, classified by name (Coder)
    instruction_roots: tuple[Root, ...]  # ``roots`` mode: every name at each top level
    skill_containers: tuple[Root, ...]  # precedence order; plugins are added by the skill scan
    plugin_cache: str | None
    mcp_files: tuple[McpFile, ...]
    allowed_roots: tuple[str, ...]
    command_folders: tuple[Root, ...] = ()  # custom commands (skills.commands): the user's, then the work dir's upward

    @property
    def doc_boundary(self) -> str:
        return self.project_root or self.work_dir

    def boundary_of(self, path: str) -> str | None:
        """The boundary the scan walked ``path`` from: that of the innermost root holding it.

        ``path`` is something the scan found (an instruction file, a skill's folder or file);
        None when no root of this layout holds it. Reading it again beneath this boundary
        reads what the scan may read, never more (a repository inside home stays bounded by
        the project root, not by home).
        """
        holders = [own for root in self.skill_containers if root.follows and (own := _own_holder(path, root))]
        holders += [(d, self.doc_boundary) for d in self.chain]
        holders += [(self.plugin_cache, self.plugin_cache)] if self.plugin_cache else []
        roots = (*self.home_dirs, *self.source_roots, *self.instruction_roots, *self.skill_containers)
        for root in (*roots, *self.command_folders):
            holders.append((root.path, root.boundary))
        holders += [(os.path.dirname(r.path), r.boundary) for r in self.source_files]  # a file root: its folder
        best: tuple[str, str] | None = None
        for holder, boundary in holders:
            if is_within(path, holder) and is_within(path, boundary) and (best is None or len(holder) > len(best[0])):
                best = (holder, boundary)
        return best[1] if best else None


Markers = list[tuple[str, os.stat_result | None]]


def resolved_root(path: str, boundary: str) -> tuple[str, str, bool]:
    """The user's own skill dir ``path`` as the scan reads it: ``(where, boundary, follows)``.

    Where it really is when a link on its way leads elsewhere (Codex lists the resolved folder);
    out of ``boundary`` (the user linked it there), that folder becomes its own boundary and links
    in it must stay inside it (``follows`` False). A dir reached without a link keeps its path.
    """
    real = os.path.realpath(path)
    if real == path or real == os.path.join(os.path.realpath(boundary), os.path.relpath(path, boundary)):
        return path, boundary, True
    real_boundary = os.path.realpath(boundary)
    if is_within(real, real_boundary):
        return real, real_boundary, True
    return real, real, False


def _own_holder(path: str, root: Root) -> tuple[str, str] | None:
    """Where the scan read ``path`` from in the user's own skill dir ``root``, and its boundary: the first
    link below it that leaves the boundary is its own (skills.user_links), as the scan's walk has it."""
    where, boundary, follows = resolved_root(root.path, root.boundary)
    if not is_within(path, where):
        return None
    if not follows:
        return where, boundary
    real_boundary, current = os.path.realpath(boundary), where
    for part in os.path.relpath(path, where).split(os.sep):
        current = os.path.join(current, part)
        if os.path.islink(current) and not is_within(os.path.realpath(current), real_boundary):
            return current, current
    return where, boundary


def chain_layout(
    work_dir: str,
    config: Config,
    markers_seen: Markers | None,
    *,
    user_skills_first: bool,
    accept: Accept | None = None,
) -> Layout:
    """The chain plan of ``work_dir`` (absolute, an existing directory) under ``config``.

    ``markers_seen`` receives the root markers looked at (see ``find_project_root``, which ``accept`` narrows).
    """
    root = find_project_root(work_dir, config.project_doc.root_markers, markers_seen, accept)
    dirs = chain(root, work_dir) if root else (work_dir,)
    project = root or work_dir
    given = _declared(config, work_dir, project, roots_mode=False)
    skills = config.skills
    system = skills.system_dir if skills.system_dir.strip() else ""
    follows = skills.user_links != "home" and not (
        is_within(system or "/", project) or is_within(project, system or "/")
    )
    found = _chain_mode(dirs, project, given, skills.containers, (system, follows), user_skills_first)
    # A project's .mcp.json sits at its root (Claude Code)
    layout = _assemble(work_dir, root, dirs, config, given, found, mcp_base=project, home_dirs=given.home_dirs)
    if not (skills.enabled and skills.commands != "off"):
        return layout
    commands = _command_folders(config, dirs, project, work_dir)
    allowed = tuple(dict.fromkeys((*layout.allowed_roots, *(r.boundary for r in commands))))
    return replace(layout, command_folders=commands, allowed_roots=allowed)


def roots_layout(work_dir: str, config: Config) -> Layout:
    """Coder's plan of ``work_dir``: shallow roots, no project root, no chain (Coder reads the work dir's configs)."""
    given = _declared(config, work_dir, work_dir, roots_mode=True)
    found = _roots_mode(work_dir, given, config.skills.containers)
    return _assemble(work_dir, None, (work_dir,), config, given, found, mcp_base=work_dir, home_dirs=())


def _assemble(
    work_dir: str,
    root: str | None,
    dirs: tuple[str, ...],
    config: Config,
    given: _Given,
    found: _Found,
    *,
    mcp_base: str,
    home_dirs: tuple[Root, ...],
) -> Layout:
    skills, home, project = config.skills, config.home, root or work_dir
    single_configs = tuple(
        McpFile(r.path, r.scope, r.boundary, False, r.source)
        for r in given.source_files
        if os.path.basename(r.path) == ".mcp.json"
    )
    mcp_files = _mcp_files(config, mcp_base, project, home) + found.extra_mcp + single_configs
    single_skills = tuple(r for r in given.source_files if os.path.basename(r.path) == skills.meta_file)
    return Layout(
        work_dir=work_dir,
        project_root=root,
        chain=dirs,
        home_dirs=home_dirs,
        source_roots=given.sources,
        source_files=given.source_files,
        instruction_roots=found.instruction_roots,
        skill_containers=_dedupe(single_skills + found.containers) if skills.enabled else (),
        plugin_cache=given.plugin_cache,
        mcp_files=_dedupe_mcp(mcp_files),
        allowed_roots=_allowed(project, work_dir, home, given, skills.system_dir),
    )


@dataclass(frozen=True, slots=True)
class _Given:
    """What the settings name besides the project: declared sources, home instruction and skill dirs, plugins."""

    sources: tuple[Root, ...]
    source_files: tuple[Root, ...]
    home_dirs: tuple[Root, ...]
    user_dirs: tuple[Root, ...]
    plugin_cache: str | None


def _declared(config: Config, work_dir: str, project: str, roots_mode: bool) -> _Given:
    home, skills = config.home, config.skills
    declared = resolve_all(config.sources, home=home, work_dir=work_dir)
    sources = tuple(Root(path, Scope.SOURCE, path, source=path) for path in declared if not os.path.isfile(path))
    source_files = tuple(
        Root(path, Scope.SOURCE, os.path.dirname(path), source=path) for path in declared if os.path.isfile(path)
    )
    # In Coder's roots mode every root is its own symlink boundary; elsewhere home is one.
    home_dirs = tuple(
        Root(path, Scope.HOME, path if roots_mode else boundary_for(path, (home,)))
        for path in resolve_all(config.project_doc.instruction_dirs, home=home, work_dir=work_dir)
    )
    # never a folder of the project's, nor one holding the project (a repository checked out in it)
    follows = skills.user_links != "home" and not roots_mode
    user_dirs = tuple(
        Root(
            path,
            Scope.REPO if is_within(path, project) else Scope.USER,
            path if roots_mode else boundary_for(path, (project, home)),
            follows=follows and not is_within(path, project) and not is_within(project, path),
        )
        for path in resolve_all(skills.dirs, home=home, work_dir=work_dir)
    )
    plugin_cache = (
        resolve_all([skills.plugin_cache], home=home, work_dir=work_dir)[0]
        if skills.enabled and skills.include_plugins and skills.plugin_cache.strip()
        else None
    )
    return _Given(sources, source_files, home_dirs, user_dirs, plugin_cache)


@dataclass(frozen=True, slots=True)
class _Found:
    """Where a discovery mode looks: skill containers in precedence order, other MCP configs, instruction roots."""

    containers: tuple[Root, ...]
    extra_mcp: tuple[McpFile, ...]
    instruction_roots: tuple[Root, ...]


def _roots_mode(work_dir: str, given: _Given, names: tuple[str, ...]) -> _Found:
    work_root = Root(work_dir, Scope.PROJECT, work_dir)
    containers = (
        _containers_of(given.sources, names, shallow=True)
        # skills under ~/.coder are the user's, whichever way they are reached
        + _containers_of(given.home_dirs, names, shallow=True, scope=Scope.USER)
        + given.user_dirs
        + _containers_of((work_root,), names, shallow=True, scope=Scope.REPO)
    )
    extra_mcp = tuple(
        McpFile(os.path.join(r.path, ".mcp.json"), r.scope, r.boundary, False, r.source)
        for r in (*given.sources, *given.home_dirs)
    )
    return _Found(containers, extra_mcp, (*given.sources, *given.source_files, *given.home_dirs, work_root))


def _chain_mode(
    dirs: tuple[str, ...],
    project: str,
    given: _Given,
    names: tuple[str, ...],
    system_dir: tuple[str, bool],
    user_first: bool,
) -> _Found:
    repo = _containers_of(tuple(Root(d, Scope.REPO, project) for d in dirs), names, shallow=False)
    sources = _containers_of(given.sources, names, shallow=True)
    path, follows = system_dir
    system = (Root(path, Scope.SYSTEM, path, follows=follows),) if path else ()
    if user_first:  # the user's skills first, then the work dir's upward
        containers = given.user_dirs + tuple(reversed(repo)) + sources
    else:
        containers = repo + sources + given.user_dirs + system
    extra_mcp = tuple(
        McpFile(os.path.join(r.path, ".mcp.json"), r.scope, r.boundary, False, r.source) for r in given.sources
    )
    return _Found(containers, extra_mcp, ())


def _command_folders(config: Config, dirs: tuple[str, ...], project: str, work_dir: str) -> tuple[Root, ...]:
    """The folders custom commands are read from, in the order their names are claimed: the user's own
    (``skills.command_dirs``), then ``.claude/commands`` of the work dir and of each folder above it to the root."""
    home = config.home
    user = tuple(
        Root(path, Scope.REPO if is_within(path, project) else Scope.USER, boundary_for(path, (project, home)))
        for path in resolve_all(config.skills.command_dirs, home=home, work_dir=work_dir)
    )
    chain = tuple(Root(os.path.join(d, ".claude", "commands"), Scope.REPO, project) for d in reversed(dirs))
    return _dedupe(user + chain)


def _allowed(project: str, work_dir: str, home: str, given: _Given, system_dir: str) -> tuple[str, ...]:
    """Every root a read may start from (the containment test holds the scan to them)."""
    roots = (*given.sources, *given.source_files, *given.home_dirs, *given.user_dirs)
    allowed = (project, work_dir, home, *(r.boundary for r in roots))
    if given.plugin_cache:
        allowed += (given.plugin_cache,)
    if system_dir.strip():
        allowed += (absolute(system_dir),)
    return tuple(dict.fromkeys(absolute(p) for p in allowed))


def _containers_of(
    roots: tuple[Root, ...], names: tuple[str, ...], *, shallow: bool, scope: Scope | None = None
) -> tuple[Root, ...]:
    """Skill containers under each root; in ``roots`` mode a root named ``skills`` is one too."""
    out: list[Root] = []
    for root in roots:
        if shallow and os.path.basename(root.path) == "skills":
            out.append(Root(root.path, scope or root.scope, root.boundary, root.source))
        out.extend(
            Root(os.path.join(root.path, name), scope or root.scope, root.boundary, root.source) for name in names
        )
    return tuple(out)


def _mcp_files(config: Config, base: str, project: str, home: str) -> tuple[McpFile, ...]:
    files = resolve_all(config.mcp.config_files, home=home, work_dir=base)
    return tuple(
        McpFile(
            path, Scope.PROJECT if is_within(path, project) else Scope.USER, boundary_for(path, (project, home)), True
        )
        for path in files
    )


def _dedupe(roots: tuple[Root, ...]) -> tuple[Root, ...]:
    seen: dict[str, Root] = {}
    for root in roots:
        seen.setdefault(root.path, root)
    return tuple(seen.values())


def _dedupe_mcp(files: tuple[McpFile, ...]) -> tuple[McpFile, ...]:
    seen: dict[str, McpFile] = {}
    for item in files:
        seen.setdefault(item.path, item)
    return tuple(seen.values())
