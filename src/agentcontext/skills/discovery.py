"""Agent Skills: folders holding a ``SKILL.md``, found in containers in precedence order.

Each container (``.agents/skills``, ``.codex/skills``, ``.claude/skills``, ``skills``,
the user's skill dirs, each plugin's ``skills``) is scanned breadth first: a folder
holding a regular file named exactly ``SKILL.md`` is a skill, and the scan does not
descend into it. By default only a container's immediate children are looked at;
``skills.max_depth`` (at most 6) goes deeper, visiting at most ``skills.max_dirs_per_root``
folders per container. Names starting with ``.`` and ``node_modules`` are skipped.
Symlinked folders are followed while their target stays inside the container's
boundary; each folder is visited once, so cycles end; a SKILL.md reached twice is one
skill, with a warning naming the second path.

Precedence (``skills.precedence``): ``first``, the first container to offer a name wins it
(names compared without case) and later skills of that name are ``shadowed``; ``user``
(Claude Code), the same with names compared exactly, user folders coming first; ``last``
(Gemini CLI), the last container's copy wins, names compared exactly; ``none``
(Codex), every copy is offered and says where the others are. Skills named in
``skills.disabled`` are ``disabled``, every copy of them.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from hashlib import sha256

from agentcontext.fs import text_links
from agentcontext.fs.files import Entry, EntryKind, ListedEntry, Reader, is_within
from agentcontext.instructions.loading import OFFERED
from agentcontext.layout import Layout, resolved_root
from agentcontext.peers.claude.plugins import installed
from agentcontext.resource import Kind as ResourceKind
from agentcontext.resource import Resource, Scope, Status, make
from agentcontext.sanitize import hidden_text_warnings
from agentcontext.settings.config import Config
from agentcontext.skills import commands
from agentcontext.skills.codex_folders import LOOKED_FOR, CodexFolders
from agentcontext.skills.validation import check, decode_skill

_SKIPPED_NAMES = frozenset({"node_modules"})
_POLICY_HIDES = "agents/openai.yaml sets policy.allow_implicit_invocation: false (Codex leaves it out of the list)"
# Enum members used once per skill, bound once (an enum class attribute costs ~0.2 us on Python 3.11).
_FILE, _MISSING, _DIRECTORY, _ESCAPE = EntryKind.FILE, EntryKind.MISSING, EntryKind.DIRECTORY, EntryKind.ESCAPE
_SKILL, _OK, _INVALID = ResourceKind.SKILL, Status.OK, Status.INVALID


@dataclass(frozen=True, slots=True)
class Container:
    """Where skills are looked for; ``namespace`` prefixes plugin skill names."""

    path: str
    scope: Scope
    boundary: str
    source: str | None = None
    namespace: str | None = None
    note: str | None = None  # a warning every skill of this container carries
    follows: bool = False  # a link in it leaving its boundary is followed, as its own boundary (the user's own)


def containers(layout: Layout, reader: Reader) -> list[Container]:
    """All containers in precedence order: plugin skills last, or before the work dir's in ``roots`` mode (Coder)."""
    out = [
        _resolved(r.path, r.scope, r.boundary, r.source)
        if r.follows
        else Container(r.path, r.scope, r.boundary, r.source)
        for r in layout.skill_containers
    ]
    plugins: list[Container] = []
    if layout.plugin_cache:
        for plugin in installed(layout.plugin_cache, reader):
            note = None
            if plugin.other_versions:
                note = (
                    f"plugin {plugin.plugin}: version {plugin.version} is used; "
                    f"older installed version(s) ignored: {', '.join(plugin.other_versions)}"
                )
            plugins.append(Container(plugin.skills_dir, Scope.PLUGIN, layout.plugin_cache, None, plugin.plugin, note))
    at = len(out)
    if layout.instruction_roots:  # Coder's root order: ..., the plugin cache, then the work dir (scope repo)
        at = next((i for i, c in enumerate(out) if c.scope is Scope.REPO), at)
    return out[:at] + plugins + out[at:]


def _resolved(path: str, scope: Scope, boundary: str, source: str | None) -> Container:
    """The user's own skill dir, as :func:`~agentcontext.layout.resolved_root` places it."""
    where, bound, follows = resolved_root(path, boundary)
    return Container(where, scope, bound, source, follows=follows)


def discover(layout: Layout, config: Config, reader: Reader) -> list[Resource]:
    """Every skill candidate: ok, shadowed, disabled, invalid, oversize or unreadable."""
    if not config.skills.enabled:
        return []
    found = _Found()
    skills = config.skills
    codex = CodexFolders(reader) if skills.plugin_manifests or skills.openai_policy else None
    for container in containers(layout, reader):
        start = len(found.resources)
        _scan(container, config, reader, found, codex)
        if codex is not None:
            _as_codex_lists(found.resources, start, container, codex, config)
    offered = _apply_precedence(found.resources, skills.disabled, skills.precedence)
    if layout.command_folders:  # custom commands: listed after every skill, which wins a name over them
        offered += commands.discover(layout.command_folders, config, reader, offered)
    return offered


def _as_codex_lists(
    resources: list[Resource], start: int, container: Container, codex: CodexFolders, config: Config
) -> None:
    """The container's skills found from ``start`` on as Codex lists them (:mod:`.codex_folders`): hidden by
    their folder's policy, named ``<plugin>:<name>`` below a plugin's manifest."""
    names, policy = config.skills.plugin_manifests, config.skills.openai_policy
    for at in range(start, len(resources)):
        resource = resources[at]
        if resource.name is None or resource.kind is not _SKILL:
            continue
        folder = os.path.dirname(resource.path)
        if policy and resource.status is _OK and codex.hidden(folder, container.boundary):
            resource = resource.with_status(Status.DISABLED, _POLICY_HIDES)
        plugin = codex.plugin_of(folder, container.path, container.boundary) if names else None
        if plugin is not None:
            resource = resource._replace(name=f"{plugin}:{resource.name}")
        resources[at] = resource


class _Found:
    """The candidates so far, each SKILL.md once: a second path to the same file is a warning on the first."""

    __slots__ = ("resources", "seen")

    def __init__(self) -> None:
        self.resources: list[Resource] = []
        self.seen: dict[str, int] = {}  # real SKILL.md path -> index in ``resources``

    def add(self, resource: Resource) -> None:
        """A candidate that is no SKILL.md read (a bad link, an unlistable folder)."""
        self.resources.append(resource)

    def again(self, at: int, resource: Resource) -> None:
        """``resource`` is the SKILL.md already found at index ``at``, reached by another path."""
        first = self.resources[at]
        self.resources[at] = first._replace(warnings=(*first.warnings, f"also reached via {resource.path}"))


def _scan(container: Container, config: Config, reader: Reader, found: _Found, codex: CodexFolders | None) -> None:
    top = reader.probe(container.path, container.boundary)
    start = len(found.resources)
    if top.kind is EntryKind.FILE and os.path.basename(container.path) == config.skills.meta_file:
        folder = os.path.dirname(container.path)  # a declared source that is one SKILL.md (Coder)
        parent, _, name = folder.rpartition("/")
        shared = _Shared(container, config, reader, found)
        _skills_in(parent, [name], [reader.real_root(folder)], shared, None, container.boundary)
        _explain_text_links(found.resources, start, config.skills.meta_file, container.boundary, reader)
    elif top.kind is EntryKind.DIRECTORY:  # a missing container is not a problem
        mode = config.skills.container_skill
        own = mode != "ignored" and _own_skill(container, config, reader, found)
        if not (own and mode == "only"):  # ``only``: the container is that one skill (Copilot CLI)
            _walk(container, config, reader, found, codex)
        _explain_text_links(found.resources, start, config.skills.meta_file, container.boundary, reader)
    elif top.kind is EntryKind.FILE:  # a link to a folder of skills, checked out as a file: said, not passed over
        _text_link(top.path, container, reader, found, "no skill in the folder it names is read")
    elif (
        top.kind in (EntryKind.ESCAPE, EntryKind.BROKEN) and os.path.basename(container.path) == config.skills.meta_file
    ):
        found.add(_bad_link(top, container))  # a SKILL.md looked for by name (Gemini CLI's, a declared source)


def _own_skill(container: Container, config: Config, reader: Reader, found: _Found) -> bool:
    """The container's own ``SKILL.md`` as a skill, when it holds one (``skills.container_skill``); whether it did."""
    meta_file = config.skills.meta_file
    entry = reader.probe(f"{container.path}/{meta_file}", container.boundary)
    if entry.kind is EntryKind.MISSING or entry.kind is EntryKind.DIRECTORY:
        return False
    parent, _, name = container.path.rpartition("/")
    shared = _Shared(container, config, reader, found)
    _skills_in(parent, [name], [reader.real_root(container.path)], shared, None, container.boundary)
    return True


def _walk(container: Container, config: Config, reader: Reader, found: _Found, codex: CodexFolders | None) -> None:
    """Breadth first below the container; a folder holding SKILL.md is a skill and a leaf (Codex, with
    ``skills.inside_skills``, looks inside it too).

    The folders of one listing are read in one :meth:`Reader.load_each` call; a symlinked one
    (rare) closes the batch before it, so every result keeps the listing's order. In a container that
    ``follows`` (the user's own), a linked folder leaving the boundary is its own boundary, and the
    folders below it are walked beneath it: links there stay inside it. Each listing tells ``codex`` which
    of the files Codex looks for in a skill's folder are there, so that no skill's folder is probed for them.
    """
    limit, max_depth = config.skills.max_dirs_per_root, config.skills.max_depth
    visited = {reader.real_root(container.path)}  # every folder visited, the container included (Codex)
    home = container.boundary
    queue: deque[tuple[str, int, str]] = deque([(container.path, 0, home)])
    shared = _Shared(container, config, reader, found)
    note = _FOLLOWS.get(config.profile)
    while queue:
        directory, depth, boundary = queue.popleft()
        try:
            listing = reader.list_dir(directory, strict=True, boundary=boundary)
        except OSError as exc:  # a folder we may not list is reported, never passed over
            found.add(_unlistable(directory, exc, container))
            continue
        _tell(codex, directory, listing)
        _strays_among(directory, listing, shared, boundary, top=depth == 0)
        real_directory = reader.real_root(directory)
        aliased = real_directory != directory  # most folders are where they are written: one path per child
        deeper: list[tuple[str, str]] | None = [] if depth + 1 < max_depth else None  # folders to descend
        leaves: list[str] = []  # the folders to read, with their real paths
        reals: list[str | None] = []
        for child in listing:
            name = child.name
            if name[0] == "." or name in _SKIPPED_NAMES or not (child.is_dir or child.is_symlink):
                continue
            under = boundary
            if child.is_symlink:
                if name == shared.meta_file:  # a skill's own SKILL.md (Codex looks inside skills): read with it
                    continue
                _skills_in(directory, leaves, reals, shared, deeper, boundary)
                leaves, reals = [], []
                entry, under = _linked(f"{directory}/{name}", boundary, container.follows and boundary == home, reader)
                if entry.kind is not EntryKind.DIRECTORY:
                    if entry.kind in (EntryKind.ESCAPE, EntryKind.BROKEN):
                        found.add(_bad_link(entry, container, note))
                    continue
                real = entry.real_path
                written: str | None = real
            else:
                real = f"{real_directory}/{name}" if aliased else f"{directory}/{name}"
                written = real if aliased else None  # None: where it is written
            if real in visited:
                continue
            if len(visited) >= limit:
                _skills_in(directory, leaves, reals, shared, deeper, boundary)
                found.add(_truncated_scan(container, limit))
                return
            visited.add(real)
            leaves.append(name)
            reals.append(written)
            if under != boundary:  # a folder the user linked out: read alone, beneath where it leads
                _skills_in(directory, leaves, reals, shared, deeper, under)
                leaves, reals = [], []
        _skills_in(directory, leaves, reals, shared, deeper, boundary)
        queue.extend((folder, depth + 1, beneath) for folder, beneath in deeper or ())


def _tell(codex: CodexFolders | None, directory: str, listing: Sequence[ListedEntry]) -> None:
    """What Codex looks for in a listed folder, where it is wanted (:mod:`.codex_folders`)."""
    if codex is not None:
        codex.listed(directory, LOOKED_FOR.intersection(child.name for child in listing))


def _linked(path: str, boundary: str, own: bool, reader: Reader) -> tuple[Entry, str]:
    """A linked child of a walk beneath ``boundary``, and the boundary to read it beneath: where the user's
    ``own`` link (one in their skill dir, not in a folder a link led to) leads, when out of ``boundary``."""
    entry = reader.probe(path, boundary)
    if own and entry.kind is EntryKind.ESCAPE:
        followed = reader.probe(path, path)
        if followed.kind is EntryKind.DIRECTORY:
            return followed, path
    return entry, boundary


class _Shared:
    """What every skill of one container shares, looked up once per container."""

    __slots__ = (
        "build",
        "container",
        "found",
        "inside",
        "limit",
        "linked_files",
        "meta_file",
        "no_links",
        "reader",
        "tag",
    )

    def __init__(self, container: Container, config: Config, reader: Reader, found: _Found) -> None:
        self.container = container
        self.inside = config.skills.inside_skills  # a skill's folder is searched too (Codex)
        self.no_links = not config.skills.linked_skill_md  # a SKILL.md that is a link is no skill (Codex)
        # the user's own SKILL.md linked out of their dir is read where it leads (Claude Code)
        self.linked_files = container.follows and config.skills.user_links == "all"
        self.meta_file = config.skills.meta_file
        self.limit = config.snapshot.max_resource_bytes + 1
        # What a skill's cached value depends on besides its file, less its folder's name (added per skill).
        self.tag = f"skill:{config.skills.validation}:{config.snapshot.max_resource_bytes}:{container.namespace}:"
        self.build = _builder(container, config)
        self.reader = reader
        self.found = found


def _skills_in(
    directory: str,
    leaves: list[str],
    reals: list[str | None],
    shared: _Shared,
    deeper: list[tuple[str, str]] | None,
    boundary: str,
) -> None:
    """The skills of the folders ``leaves`` of ``directory``, in order (``reals``: where each really is,
    None where it is written), read beneath ``boundary``; a folder without a SKILL.md goes to ``deeper``
    (when the walk descends), and so does a skill's folder with ``skills.inside_skills``."""
    if not leaves:
        return
    container, meta_file, found = shared.container, shared.meta_file, shared.found
    scope, source, note = container.scope, container.source, container.note
    loaded = shared.reader.load_each(directory, leaves, meta_file, boundary, shared.tag, shared.limit, shared.build)
    add, resources, seen = found.add, found.resources, found.seen  # bound once per listing
    inside = shared.inside
    for (meta, cached), real_folder in zip(loaded, reals, strict=True):
        kind = meta.kind
        if deeper is not None and (inside or kind is _MISSING or kind is _DIRECTORY):
            deeper.append((meta.path.rpartition("/")[0], boundary))
        if cached is None and kind is _ESCAPE and shared.linked_files and boundary == container.boundary:
            leaf = meta.path.rpartition("/")[0].rpartition("/")[2]  # the user's own SKILL.md, linked out
            reader = shared.reader
            meta, cached = reader.load_each(
                directory, [leaf], meta_file, meta.path, shared.tag, shared.limit, shared.build
            )[0]
            kind = meta.kind
        if shared.no_links and meta.is_link and cached is not None:
            error = f"{meta_file} is a symlink: Codex lists no such skill (skills.linked_skill_md)"
            add(Resource(_SKILL, meta.path, scope, Status.INVALID, meta.size, error=error, source=source))
            continue
        if cached is None:
            if kind is _MISSING and deeper is None:  # a folder the walk will not list: a misnamed SKILL.md?
                _misnamed_in(meta.path.rpartition("/")[0], shared, boundary)
            if kind is _MISSING or kind is _DIRECTORY:
                continue
            status = Status.UNREADABLE if kind in (EntryKind.BROKEN, EntryKind.ERROR) else Status.INVALID
            error = meta.error or f"{meta_file} is {meta.special}, not a regular file"
            add(Resource(_SKILL, meta.path, scope, status, error=error, source=source))
            continue
        resource = cached
        if resource.path != meta.path or resource.scope is not scope or resource.source != source:
            resource = resource._replace(path=meta.path, scope=scope, source=source)
        if note:
            resource = resource._replace(warnings=(*resource.warnings, note))
        # Identity is the real file: a folder or container reached through a symlink is the same skill.
        path = meta.path
        real = meta.real_path if meta.is_link else path if real_folder is None else f"{real_folder}/{meta_file}"
        count = len(resources)
        at = seen.setdefault(real, count)  # found.add, inlined: this runs once per skill
        if at == count:
            resources.append(resource)
        else:
            found.again(at, resource)


_Build = Callable[[Entry, "bytes | OSError", str], Resource]


def _builder(container: Container, config: Config) -> _Build:
    """What turns one SKILL.md's bytes into its resource, with the container's and config's values bound once."""
    cap = config.snapshot.max_resource_bytes
    scope, source, namespace, mode = container.scope, container.source, container.namespace, config.skills.validation

    def build(meta: Entry, raw: bytes | OSError, folder: str) -> Resource:
        """One SKILL.md (in a folder named ``folder``) into one resource, in a single step (once per skill)."""
        path = meta.path
        if isinstance(raw, OSError):
            error = raw.strerror or str(raw)
            return Resource(_SKILL, path, scope, Status.UNREADABLE, meta.size, error=error, source=source)
        size = max(meta.size, len(raw))
        digest = sha256(raw[:cap]).hexdigest()
        if len(raw) > cap:
            error = f"file size {size} exceeds per-resource cap of {cap} bytes"
            return Resource(_SKILL, path, scope, Status.OVERSIZE, size, digest, error=error, source=source)
        try:  # decode_skill's common case without its call: UTF-8 with no NUL, CR or BOM
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = "\x00"  # not the common case: decode_skill says what it is
        decode_warnings: tuple[str, ...] = ()
        utf8: bytes | None = raw  # the text's UTF-8 bytes
        # (looked for in the bytes: memchr, where a wide str is searched a character at a time)
        checked = text
        if text == "\x00" or b"\x00" in raw or b"\r" in raw or raw[:3] == b"\xef\xbb\xbf":
            decoded, checked, decode_warnings, refused = decode_skill(raw, mode)
            if decoded is None:
                return Resource(
                    _SKILL, path, scope, Status.INVALID, size, digest, None, refused, decode_warnings, source=source
                )
            text, utf8 = decoded, None
        name, description, errors, warnings, _ = check(checked, folder, mode, namespace=namespace)
        # hidden_text_warnings' fast test first: ordinary text needs no call
        ordinary = text.isascii() and ("<" not in text or "<!--" not in text)  # one character is found 20x faster
        hidden = () if ordinary else hidden_text_warnings(text, utf8)
        if decode_warnings or hidden:
            warnings = (*decode_warnings, *warnings, *hidden)
        if errors:
            error = "; ".join(errors)
            status = Status.DISABLED if error.startswith("disable-model-invocation") else Status.INVALID
            return Resource(_SKILL, path, scope, status, size, digest, None, error, warnings, name, source=source)
        return make(
            _SKILL, path, scope, _OK, size, digest, text, None, warnings, name, description, None, source, load=OFFERED
        )

    return build


def _truncated_scan(container: Container, limit: int) -> Resource:
    return Resource(
        ResourceKind.SKILL,
        container.path,
        container.scope,
        Status.EXCLUDED,
        error=f"skills scan truncated after {limit} directories (skills.max_dirs_per_root)",
        source=container.source,
    )


def _strays_among(
    directory: str, listing: Sequence[ListedEntry], shared: _Shared, boundary: str, *, top: bool = False
) -> None:
    """The files of a listing that mean a skill the agent will not read: a skill folder linked and checked out as
    a file (named as folders are, with no suffix: a ``README.md`` is never read for it), and below the container
    a ``skill.md`` or ``SKILL.MD`` in a folder with no ``SKILL.md``."""
    container, reader, found, meta_file = shared.container, shared.reader, shared.found, shared.meta_file
    size, lowered = len(meta_file), meta_file.lower()
    for child in listing:
        if not child.is_file:
            continue
        name = child.name
        if "." not in name:
            _text_link(f"{directory}/{name}", container, reader, found, "its skill is not read", boundary)
        elif (
            not top
            and len(name) == size
            and name != meta_file
            and name.lower() == lowered
            and all(other.name != meta_file for other in listing)
        ):
            found.add(_misnamed(f"{directory}/{name}", shared))


def _misnamed_in(folder: str, shared: _Shared, boundary: str) -> None:
    """A folder with no ``SKILL.md`` at the walk's last depth: its files named so but for case, said."""
    size, lowered, reader = len(shared.meta_file), shared.meta_file.lower(), shared.reader
    names = reader.names(folder, boundary)  # None: a busy folder, whose listing a rescan must not state
    for name in names.files if names is not None else reader.peek(folder, boundary):
        if len(name) == size and name.lower() == lowered and reader.probe(f"{folder}/{name}", boundary).is_file:
            shared.found.add(_misnamed(f"{folder}/{name}", shared))


def _misnamed(path: str, shared: _Shared) -> Resource:
    meta_file, container = shared.meta_file, shared.container
    error = f"not read: a skill's file is named {meta_file}, with its case (no agent reads {path.rpartition('/')[2]})"
    return Resource(ResourceKind.SKILL, path, container.scope, Status.INVALID, error=error, source=container.source)


def _text_link(
    path: str, container: Container, reader: Reader, found: _Found, lost: str, boundary: str | None = None
) -> None:
    """``path`` as ``invalid`` when it is a link to a folder checked out as a file (:mod:`~agentcontext.fs.text_links`);
    any other file where a folder is looked for is none of the skills' business."""
    error = text_links.folder_as_file(reader, path, boundary or container.boundary, lost)
    if error is not None:
        found.add(
            Resource(ResourceKind.SKILL, path, container.scope, Status.INVALID, error=error, source=container.source)
        )


def _explain_text_links(resources: list[Resource], start: int, meta_file: str, boundary: str, reader: Reader) -> None:
    """Each SKILL.md from ``start`` on that is a link checked out as a file, told so: in its error when it is
    invalid, in a warning when the agent takes its text as a skill (Claude Code needs no frontmatter)."""
    suffix, most = f"/{meta_file}", text_links.MAX_TARGET
    for at in range(start, len(resources)):
        resource = resources[at]
        if resource.size_bytes > most:
            continue
        status = resource.status
        if not (status is _INVALID or (status is _OK and "\n" not in (resource.content or "\n"))):
            continue
        path = resource.path
        if path.endswith(suffix) and (text := text_links.named_target(reader, path, boundary)) is not None:
            if status is _OK:
                said = text_links.advice(text, path, "the agent takes that text for the skill")
                resources[at] = resource._replace(warnings=(*resource.warnings, said))
            else:
                said = text_links.advice(text, path, "the agent reads that text as the skill")
                resources[at] = resource._replace(error=f"{resource.error}; {said}" if resource.error else said)


def _unlistable(directory: str, exc: OSError, container: Container) -> Resource:
    error = f"cannot list directory: {exc.strerror or exc}"
    return Resource(
        ResourceKind.SKILL, directory, container.scope, Status.UNREADABLE, error=error, source=container.source
    )


_FOLLOWS = {
    "codex": "Codex would follow this link and offer the skill there; refused: nothing outside the roots is read"
}


def _bad_link(entry: Entry, container: Container, note: str | None = None) -> Resource:
    status = Status.INVALID if entry.kind is EntryKind.ESCAPE else Status.UNREADABLE
    error = f"{entry.error} ({note})" if note and entry.kind is EntryKind.ESCAPE else entry.error
    return Resource(ResourceKind.SKILL, entry.path, container.scope, status, error=error, source=container.source)


def _apply_precedence(found: list[Resource], disabled: tuple[str, ...], precedence: str = "first") -> list[Resource]:
    """First name wins (see the module docstring); disabled names are disabled everywhere."""
    off = {name.casefold() for name in disabled}
    if precedence == "none":
        return _every_copy(found, off)
    if precedence == "last":
        return _last_wins(found, off)
    winners: dict[str, Resource] = {}
    out: list[Resource] = []
    append, by_folded = out.append, precedence == "first"
    for resource in found:  # once per skill: the common case (a new name) is one dict call
        name = resource.name
        if name is None or resource.status is not _OK:
            append(resource)
            continue
        folded = name.casefold()
        if off and folded in off:
            append(resource.with_status(Status.DISABLED, "disabled by skills.disabled"))
            continue
        winner = winners.setdefault(folded if by_folded else name, resource)
        if winner is resource:
            append(resource)
            continue
        error = f"shadowed by the {winner.scope} skill at {winner.path}"
        append(resource.with_status(Status.SHADOWED, error))
    return out


def _last_wins(found: list[Resource], off: set[str]) -> list[Resource]:
    """The last container to offer a name wins it (names compared exactly); the earlier copies are shadowed."""
    last: dict[str, Resource] = {}
    for resource in found:
        if resource.status is _OK and resource.name is not None and resource.name.casefold() not in off:
            last[resource.name] = resource
    out: list[Resource] = []
    for resource in found:
        name = resource.name
        if resource.status is not _OK or name is None:
            out.append(resource)
        elif off and name.casefold() in off:
            out.append(resource.with_status(Status.DISABLED, "disabled by skills.disabled"))
        elif last[name] is not resource:
            winner = last[name]
            out.append(resource.with_status(Status.SHADOWED, f"shadowed by the {winner.scope} skill at {winner.path}"))
        else:
            out.append(resource)
    return out


def _every_copy(found: list[Resource], off: set[str]) -> list[Resource]:
    """Codex offers every copy of a name; each copy says where the others are."""
    first: dict[str, str] = {}  # name -> the path of its first copy
    copies: dict[str, list[str]] = {}  # a name offered more than once -> the paths of every copy
    for resource in found:
        name = resource.name
        if resource.status is _OK and name is not None:
            if name in first:
                copies.setdefault(name, [first[name]]).append(resource.path)
            else:
                first[name] = resource.path
    if not copies and not off:
        return found  # every name once, none disabled: nothing to say
    out: list[Resource] = []
    for resource in found:
        name = resource.name
        if resource.status is not _OK or name is None:
            out.append(resource)
        elif off and name.casefold() in off:
            out.append(resource.with_status(Status.DISABLED, "disabled by skills.disabled"))
        elif name in copies:
            others = ", ".join(p for p in copies[name] if p != resource.path)
            warning = f"also offered from {others} (every copy is listed: no de-duplication across scopes)"
            out.append(resource._replace(warnings=(*resource.warnings, warning)))
        else:
            out.append(resource)
    return out


def roots_searched(layout: Layout, reader: Reader) -> list[tuple[str, Scope]]:
    """The containers a scan looks in, for messages such as "No skills found"."""
    return [(c.path, c.scope) for c in containers(layout, reader)]


def skill_dir(resource: Resource) -> str:
    return os.path.dirname(resource.path)


def root_of(path: str, roots: Sequence[str]) -> str | None:
    """The innermost of ``roots`` holding ``path`` (the container a skill was found in)."""
    holding = [r for r in roots if is_within(path, r)]
    return max(holding, key=len) if holding else None
