"""What Claude Code adds after it reads a file (2.1.332, observed by ``tests/realagents``).

After a ``Read`` of ``P`` it sends, in this order:

1. the user's path-scoped rules (``~/.claude/rules``) whose ``paths:`` match ``P``
   relative to the work dir;
2. for each folder strictly below the work dir down to ``P``'s folder, outermost first:
   ``CLAUDE.md``, ``.claude/CLAUDE.md``, ``CLAUDE.local.md`` (each followed by what it
   imports), then that folder's ``.claude/rules/**/*.md`` without ``paths:`` and then those
   whose ``paths:`` match ``P`` relative to the folder, each in the folder's own order;
3. the path-scoped rules of the folders from ``/`` down to the work dir whose ``paths:``
   match ``P`` relative to the folder holding their ``.claude``, outermost first.

Each is its own ``<system-reminder>`` block, its text untrimmed. When the session started
on the AGENTS.md fallback (no CLAUDE.md of its own), a folder of step 2 without a loaded
CLAUDE.md, ``.claude/CLAUDE.md`` or ``CLAUDE.local.md`` also gives its ``AGENTS.md`` and
``.claude/AGENTS.md`` (and their imports), all sent together after the reminders as one
hook context. Hidden folders and ``node_modules`` are not skipped. Every file loads once.

A folder's part (:class:`Folder`: its files read, imports followed, rules parsed) does not
depend on ``P``, so the resolver keeps it per folder version; :func:`on_read` only matches.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass, replace

from agentcontext.fs.files import is_within
from agentcontext.instructions.chain import Found
from agentcontext.instructions.globs import RuleGlobs, compile_globs
from agentcontext.peers.claude.discovery import CLAUDE_NAMES, RULES, Walk, upward
from agentcontext.resource import Load, LoadType, Resource, Scope, Status

HOOK_PREFIX = "tool.call hook additional context: "


@dataclass(frozen=True, slots=True)
class Loaded:
    """One file Claude Code sends after the read; ``hook``: inside the AGENTS.md hook's context."""

    found: Found
    hook: bool = False


@dataclass(frozen=True, slots=True)
class PathRule:
    """A path-scoped rule of the startup walk, its globs relative to ``base``, and what loading it gives."""

    path: str
    globs: tuple[str, ...]
    base: str
    found: tuple[Found, ...]


@dataclass(frozen=True, slots=True)
class StartupRules:
    user: tuple[PathRule, ...]
    project: tuple[PathRule, ...]


@dataclass(frozen=True, slots=True)
class Folder:
    """One folder below the work dir as Claude Code reads it, before any path is matched (cached per version).

    ``rules`` are ``(globs, files)`` in the folder's order (``globs`` None: no ``paths:``);
    ``claude``: a CLAUDE.md of its own loaded, so the AGENTS.md fallback skips the folder.
    """

    memory: tuple[Found, ...]
    claude: bool
    rules: tuple[tuple[tuple[str, ...] | None, tuple[Found, ...]], ...]
    agents: tuple[Found, ...]


def startup_rules(walk: Walk, resources: Iterable[Resource]) -> StartupRules:
    """The startup walk's path-scoped rules, in Claude Code's order (only those the scan lists)."""
    scoped = {r.path for r in resources if r.load is not None and r.load.type is LoadType.PATH_SCOPED}
    user: list[PathRule] = []
    for root in walk.layout.home_dirs:
        found = walk.rule_files(os.path.join(root.path, "rules"), root.boundary, set())
        user.extend(_path_rule(walk, path, Scope.HOME, walk.cwd, root.boundary) for path in found if path in scoped)
    project: list[PathRule] = []
    for directory in upward(walk.cwd):
        rules = os.path.join(directory, RULES)
        boundary = walk.boundary(directory)
        boundary = boundary if boundary != directory else rules  # above the project: each rules folder alone
        found = walk.rule_files(rules, boundary, set())
        project.extend(_path_rule(walk, path, Scope.PROJECT, directory, boundary) for path in found if path in scoped)
    return StartupRules(tuple(user), tuple(project))


def _path_rule(walk: Walk, path: str, scope: Scope, base: str, boundary: str) -> PathRule:
    globs = walk.read(walk.reader.probe(path, boundary)).globs or ()
    return PathRule(path, globs, base, _sent(_scoped(walk.load(path, scope, boundary, rule=True))))


def folder(walk: Walk, directory: str, present: frozenset[str], fallback: bool) -> Folder:
    """What ``directory`` holds for Claude Code; ``present``: the names at its top (``.claude`` included)."""
    boundary = walk.boundary(directory)
    memory: list[Found] = []
    claude = False
    for name in CLAUDE_NAMES:
        if name.split(os.sep, 1)[0] in present:
            scope = Scope.LOCAL if name == CLAUDE_NAMES[2] else Scope.PROJECT
            loaded = walk.load(os.path.join(directory, name), scope, boundary)
            claude = claude or any(f.data is not None and _loads(f) for f in loaded[:1])
            memory += _on_demand(loaded, f"Claude Code sends it after reading a file under {directory}")
    rules: list[tuple[tuple[str, ...] | None, tuple[Found, ...]]] = []
    if ".claude" in present:
        for rule in walk.rule_files(os.path.join(directory, RULES), boundary, set()):
            globs = walk.read(walk.reader.probe(rule, boundary)).globs
            loaded = walk.load(rule, Scope.PROJECT, boundary, rule=True)
            if globs is None:
                reason = f"a rule without paths: Claude Code sends it after reading a file under {directory}"
                rules.append((None, _sent(_on_demand(loaded, reason))))
            else:
                rules.append((globs, _sent(_scoped(loaded))))
    agents: list[Found] = []
    if fallback and not claude:
        reason = f"Claude Code's AGENTS.md fallback sends it after reading a file under {directory}"
        for name in walk.config.project_doc.fallback_filenames:
            if name.split(os.sep, 1)[0] in present:
                agents += _on_demand(walk.load(os.path.join(directory, name), Scope.PROJECT, boundary), reason)
    return Folder(_sent(memory), claude, tuple(rules), _sent(agents))


@functools.lru_cache(maxsize=1024)
def rule_globs(globs: tuple[str, ...]) -> RuleGlobs:
    return compile_globs(globs)


@functools.lru_cache(maxsize=8192)
def matches(globs: tuple[str, ...], path: str, base: str, *, is_dir: bool) -> bool:
    """Whether a rule with ``globs`` relative to ``base`` applies to ``path`` (pure: remembered)."""
    if path == base or not is_within(path, base):
        return False
    return rule_globs(globs).matches(path[len(base.rstrip(os.sep)) + 1 :], is_dir=is_dir)


def on_read(
    path: str, is_dir: bool, folders: Iterable[tuple[str, Folder]], rules: StartupRules, *, fallback: bool
) -> list[Loaded]:
    """The files Claude Code sends after reading ``path``, in order; ``folders``: those below the work dir."""
    out = [Loaded(f) for rule in rules.user if matches(rule.globs, path, rule.base, is_dir=is_dir) for f in rule.found]
    hooks: list[Loaded] = []
    for directory, held in folders:
        out += map(Loaded, held.memory)
        scoped: list[Loaded] = []
        for globs, found in held.rules:
            if globs is None:
                out += map(Loaded, found)
            elif matches(globs, path, directory, is_dir=is_dir):
                scoped += map(Loaded, found)
            elif rule_globs(globs).problems:  # say why a glob could not be matched
                reason = "; ".join(rule_globs(globs).problems)
                out += (Loaded(_unmatched(f, reason)) for f in found[:1])
        out += scoped
        if fallback and not held.claude:
            hooks += (Loaded(f, hook=True) for f in held.agents)
    out += (
        Loaded(f) for rule in rules.project if matches(rule.globs, path, rule.base, is_dir=is_dir) for f in rule.found
    )
    return out + hooks


def _loads(item: Found) -> bool:
    load = item.resource.load
    return load is not None and load.type is not LoadType.NOT_LOADED


def _unmatched(item: Found, reason: str) -> Found:
    return Found(item.resource._replace(content=None, load=Load(LoadType.NOT_LOADED, reason=reason)))


def _sent(found: Iterable[Found]) -> tuple[Found, ...]:
    """Each file with the text Claude Code sends: untrimmed (a BOM and CRLF kept)."""
    out: list[Found] = []
    for item in found:
        if item.data is not None and item.resource.status is Status.OK:
            item = Found(item.resource._replace(content=item.data.decode("utf-8")), item.data)
        out.append(item)
    return tuple(out)


def _on_demand(found: list[Found], reason: str) -> list[Found]:
    """The first file of a load (its load ``startup``) becomes ``on_demand``; imports stay imports."""
    out: list[Found] = []
    for item in found:
        load = item.resource.load
        if load is not None and load.type is LoadType.STARTUP:
            item = Found(item.resource._replace(load=Load(LoadType.ON_DEMAND, reason=reason)), item.data)
        out.append(item)
    return out


def _scoped(found: list[Found]) -> list[Found]:
    out: list[Found] = []
    for item in found:
        load = item.resource.load
        if load is not None and load.type is LoadType.PATH_SCOPED:
            reason = f"its paths: ({', '.join(load.globs)}) match the file read"
            item = Found(item.resource._replace(load=replace(load, reason=reason)), item.data)
        out.append(item)
    return out


def render(files: Iterable[tuple[Resource, bool]]) -> list[str]:
    """The text blocks Claude Code sends after the read: one reminder per file, then the hook's context.

    ``files`` are loaded resources with their ``hook`` flag, in order; the texts are untrimmed.
    """
    blocks: list[str] = []
    hooks: list[str] = []
    for resource, hook in files:
        if resource.status is not Status.OK or resource.content is None:
            continue
        if hook:
            hooks.append(f"Contents of {resource.path}:\n\n{resource.content}")
        else:
            text = f"Contents of {resource.path}:\n\n{resource.content}"
            blocks.append(f"<system-reminder>\n{text}\n</system-reminder>\n")
    if blocks:
        blocks[-1] = blocks[-1][:-1]  # the message's last block has no final line end
    if hooks:
        blocks.append(HOOK_PREFIX + "\n".join(hooks))
    return blocks
