"""What Claude Code adds after it reads a file (2.1.328, observed by ``tests/realagents``).

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
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass, replace

from agentcontext.claude_md import CLAUDE_NAMES, RULES, Walk, upward
from agentcontext.files import is_within
from agentcontext.globs import RuleGlobs, compile_globs
from agentcontext.instructions import Found
from agentcontext.resource import Load, LoadType, Resource, Scope, Status

HOOK_PREFIX = "tool.call hook additional context: "


@dataclass(frozen=True, slots=True)
class Loaded:
    """One file Claude Code sends after the read; ``hook``: inside the AGENTS.md hook's context."""

    found: Found
    hook: bool = False


@dataclass(frozen=True, slots=True)
class PathRule:
    """A path-scoped rule of the startup walk: its globs are relative to ``base``."""

    path: str
    scope: Scope
    base: str
    boundary: str


@dataclass(frozen=True, slots=True)
class StartupRules:
    user: tuple[PathRule, ...]
    project: tuple[PathRule, ...]


def startup_rules(walk: Walk, resources: Iterable[Resource]) -> StartupRules:
    """The startup walk's path-scoped rules, in Claude Code's order (only those the scan lists)."""
    scoped = {r.path for r in resources if r.load is not None and r.load.type is LoadType.PATH_SCOPED}
    user: list[PathRule] = []
    for root in walk.layout.home_dirs:
        for path in walk.rule_files(os.path.join(root.path, "rules"), root.boundary, set()):
            if path in scoped:
                user.append(PathRule(path, Scope.HOME, walk.cwd, root.boundary))
    project: list[PathRule] = []
    for directory in upward(walk.cwd):
        rules = os.path.join(directory, RULES)
        boundary = walk.boundary(directory)
        for path in walk.rule_files(rules, boundary if boundary != directory else rules, set()):
            if path in scoped:
                project.append(PathRule(path, Scope.PROJECT, directory, boundary))
    return StartupRules(tuple(user), tuple(project))


@functools.lru_cache(maxsize=1024)
def rule_globs(globs: tuple[str, ...]) -> RuleGlobs:
    return compile_globs(globs)


def matches(globs: tuple[str, ...], path: str, base: str, *, is_dir: bool) -> bool:
    """Whether a rule with ``globs`` relative to ``base`` applies to ``path``."""
    if path == base or not is_within(path, base):
        return False
    return rule_globs(globs).matches(path[len(base.rstrip(os.sep)) + 1 :], is_dir=is_dir)


@dataclass
class OnRead:
    """What one lookup adds, path after path; each file once (``walk.processed``)."""

    walk: Walk
    rules: StartupRules
    fallback: bool
    claude_dirs: set[str]

    def read(self, path: str, is_dir: bool, dirs: list[tuple[str, frozenset[str]]]) -> list[Loaded]:
        """The files sent after reading ``path``; ``dirs``: the folders below the work dir, with their names present."""
        walk = self.walk
        out = [Loaded(f) for rule in self.rules.user for f in self._rule(rule, path, is_dir)]
        hooks: list[Loaded] = []
        for directory, present in dirs:
            boundary = walk.boundary(directory)
            memory: list[Found] = []
            for name in CLAUDE_NAMES:
                if name.split(os.sep, 1)[0] in present:
                    scope = Scope.LOCAL if name == CLAUDE_NAMES[2] else Scope.PROJECT
                    loaded = walk.load(os.path.join(directory, name), scope, boundary)
                    if loaded and loaded[0].data is not None and _loads(loaded[0]):
                        self.claude_dirs.add(directory)
                    memory += _on_demand(loaded, f"Claude Code sends it after reading a file under {directory}")
            if ".claude" in present:
                memory += self._folder_rules(directory, boundary, path, is_dir)
            out += map(Loaded, memory)
            if self.fallback and directory not in self.claude_dirs:
                for name in walk.config.project_doc.fallback_filenames:
                    if name.split(os.sep, 1)[0] in present:
                        loaded = walk.load(os.path.join(directory, name), Scope.PROJECT, boundary)
                        reason = f"Claude Code's AGENTS.md fallback sends it after reading a file under {directory}"
                        hooks += (Loaded(f, hook=True) for f in _on_demand(loaded, reason))
        out += (Loaded(f) for rule in self.rules.project for f in self._rule(rule, path, is_dir))
        return out + hooks

    def _folder_rules(self, directory: str, boundary: str, path: str, is_dir: bool) -> list[Found]:
        walk = self.walk
        unconditional: list[Found] = []
        scoped: list[Found] = []
        for rule in walk.rule_files(os.path.join(directory, RULES), boundary, set()):
            if rule in walk.processed:
                continue
            read = walk.read(walk.reader.probe(rule, boundary), Scope.PROJECT)
            if read.globs is None:
                reason = f"a rule without paths: Claude Code sends it after reading a file under {directory}"
                unconditional += _on_demand(walk.load(rule, Scope.PROJECT, boundary, rule=True), reason)
            elif matches(read.globs, path, directory, is_dir=is_dir):
                scoped += _scoped(walk.load(rule, Scope.PROJECT, boundary, rule=True), path)
        return unconditional + scoped

    def _rule(self, rule: PathRule, path: str, is_dir: bool) -> list[Found]:
        if rule.path in self.walk.processed:
            return []
        read = self.walk.read(self.walk.reader.probe(rule.path, rule.boundary), rule.scope)
        if read.globs is None or not matches(read.globs, path, rule.base, is_dir=is_dir):
            return []
        return _scoped(self.walk.load(rule.path, rule.scope, rule.boundary, rule=True), path)


def _loads(item: Found) -> bool:
    load = item.resource.load
    return load is not None and load.type is not LoadType.NOT_LOADED


def _on_demand(found: list[Found], reason: str) -> list[Found]:
    """The first file of a load (its load ``startup``) becomes ``on_demand``; imports stay imports."""
    out: list[Found] = []
    for item in found:
        load = item.resource.load
        if load is not None and load.type is LoadType.STARTUP:
            item = Found(replace(item.resource, load=Load(LoadType.ON_DEMAND, reason=reason)), item.data)
        out.append(item)
    return out


def _scoped(found: list[Found], path: str) -> list[Found]:
    out: list[Found] = []
    for item in found:
        load = item.resource.load
        if load is not None and load.type is LoadType.PATH_SCOPED:
            reason = f"its paths: ({', '.join(load.globs)}) match {path}"
            item = Found(replace(item.resource, load=replace(load, reason=reason)), item.data)
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
            blocks.append(f"<system-reminder>\nContents of {resource.path}:\n\n{resource.content}\n</system-reminder>\n")
    if blocks:
        blocks[-1] = blocks[-1][:-1]  # the message's last block has no final line end
    if hooks:
        blocks.append(HOOK_PREFIX + "\n".join(hooks))
    return blocks
