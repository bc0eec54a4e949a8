"""What a workspace MCP server would run, whole: the program as resolved, its files in the repository, its environment.

An approval binds to a :class:`Launch` (its :attr:`~Launch.digest`), not to the entry's text
alone: the same ``"command": "mcp-server-time"`` runs another program once the entry's
``env`` puts the repository's ``bin`` first on ``PATH``, and an approved ``node ./server.js``
runs other code once ``server.js`` changes. So:

* the command is resolved as the process would be started: against the ``PATH`` of the
  server's own environment, a relative name against its cwd; the server is then started by
  that absolute path (not by name, so no later ``PATH`` lookup can pick another program),
  and the path's real target (past its links) is part of the digest too. The path itself is
  started, not its target: a virtualenv's ``python`` link is how that Python finds its packages;
* a program or a script inside the repository (the program itself, or an argument naming
  a file) is read beneath the repository's root and its sha256 joins the digest: an edit
  puts the server back to pending, and the approval shows what changed (:func:`changes`);
  an argument naming a folder of the repository is called out, since what an interpreter
  loads from it is not bound;
* environment keys that change what a program or an interpreter loads (``PATH``,
  ``LD_PRELOAD``, ``NODE_OPTIONS``, ``PYTHONPATH``, a package index...) are called out;
* the server's environment is clean (:func:`child_environment`): the variables of
  :data:`INHERITED` and those the user's ``mcp.inherit_env`` names, never agentcontext's own
  (``AGENTCONTEXT_*``), then the entry's ``env``.

What the user is shown is :meth:`Launch.runs`: the arguments and environment as written and whole
(``${VAR}`` unexpanded; nothing masked, since a token-shaped word may as well be code that runs),
a URL's and headers' credentials masked; and :func:`describe` its lines for a terminal. A snapshot
(the agent's API, the control plane) holds ``runs(masked=True)`` instead, its credential-shaped
parts ``***`` and said to be (``Runs.masked``): a view that hides part of what runs is never
approved from there (``MASKED_NOTE``). Nothing here starts anything.
"""

from __future__ import annotations

import dataclasses
import difflib
import fnmatch
import functools
import hashlib
import json
import os
import re
import shlex
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentcontext.audit.findings import printable
from agentcontext.fs.beneath import Walker, is_within, realpath
from agentcontext.resource import MASKED_NOTE, Runs, RunsFile
from agentcontext.workspace_mcp.config import PRODUCT_PREFIXES, ServerSpec
from agentcontext.workspace_mcp.secrets import MASK, entry_args, mask_args, mask_value, quoted, redact_url

# What a server inherits of the agent's environment: the MCP SDK's own default for stdio servers
# (HOME, LOGNAME, PATH, SHELL, TERM, USER), the locale and time zone, the temporary and XDG folders,
# and what reaching the network needs (proxies, CA bundles). Anything else only by ``mcp.inherit_env``.
INHERITED = (
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER",
    "LANG", "LANGUAGE", "LC_*", "TZ", "TMPDIR",
    "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "XDG_STATE_HOME",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
)  # fmt: skip

# Environment keys that change what runs or what it loads, each with why (exact names, then prefixes).
_LOADER_KEYS = {
    "PATH": "changes which program runs",
    "HOME": "changes which configuration files load",
    "XDG_CONFIG_HOME": "changes which configuration files load",
    "ZDOTDIR": "changes which shell startup files load",
    "BASH_ENV": "a file every bash script runs first",
    "ENV": "a file every sh runs first",
    "SHELL": "changes which shell runs commands",
    "NODE_OPTIONS": "changes what Node.js loads",
    "NODE_PATH": "changes what Node.js loads",
    "PERL5LIB": "changes what Perl loads",
    "PERL5OPT": "changes what Perl loads",
    "PERLLIB": "changes what Perl loads",
    "RUBYOPT": "changes what Ruby loads",
    "RUBYLIB": "changes what Ruby loads",
    "GEM_HOME": "changes what Ruby loads",
    "GEM_PATH": "changes what Ruby loads",
    "CLASSPATH": "changes what Java loads",
    "JAVA_TOOL_OPTIONS": "changes what Java loads",
    "JDK_JAVA_OPTIONS": "changes what Java loads",
    "_JAVA_OPTIONS": "changes what Java loads",
    "GCONV_PATH": "changes which libraries load",
}
_LOADER_PREFIXES = (
    ("LD_", "changes which libraries load"),
    ("DYLD_", "changes which libraries load"),
    ("PYTHON", "changes what Python loads"),
    ("GIT_", "changes what git runs"),
    ("npm_config_", "changes where packages come from and what npm runs"),
    ("NPM_CONFIG_", "changes where packages come from and what npm runs"),
    ("UV_", "changes where packages come from"),
    ("PIP_", "changes where packages come from"),
)
MAX_BOUND_FILES = 16  # repository files one entry binds; past that it is not started
MAX_BOUND_BYTES = 512 * 1024 * 1024  # a bound file over this is not hashed, and the server not started
MAX_KEPT_TEXT = 64 * 1024  # a bound file's text is kept with the approval (for the diff) up to this size
MAX_CHANGES_CHARS = 4096  # as a tool diff: a DiffText on the wire
_FORM = 2  # the digest's form: bump when what it covers changes (every approval is then asked again)
_CANONICAL = json.JSONEncoder(sort_keys=True).encode


def child_environment(
    environ: Mapping[str, str], declared: Iterable[tuple[str, str]] = (), inherit: Sequence[str] = ()
) -> dict[str, str]:
    """A server's environment: the inherited variables of ``environ`` (never ours), then what the entry declares."""
    inherited = _inherited(tuple(inherit)).fullmatch
    env = {key: value for key, value in environ.items() if inherited(key) and not key.startswith(PRODUCT_PREFIXES)}
    env.update(declared)
    return env


@functools.lru_cache(maxsize=32)
def _inherited(inherit: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern for :data:`INHERITED` and the user's names (each a shell-style pattern, case-sensitive)."""
    return re.compile("|".join(fnmatch.translate(pattern) for pattern in (*INHERITED, *inherit)))


def loader_reason(key: str) -> str | None:
    """Why an environment key changes what runs or what it loads; None when it does not."""
    if key in _LOADER_KEYS:
        return _LOADER_KEYS[key]
    return next((why for prefix, why in _LOADER_PREFIXES if key.startswith(prefix)), None)


@dataclass(frozen=True, slots=True)
class BoundFile:
    """A file of the repository the server runs or is handed: its content is part of the approval."""

    path: str  # real path, inside the repository
    role: str  # "program" or "argument N"
    sha256: str
    size: int
    text: str | None = field(default=None, repr=False)  # kept with the approval for a diff; None: binary or large

    def shown(self) -> RunsFile:
        return RunsFile(self.path, self.role, self.sha256, self.size)


@dataclass(frozen=True, slots=True)
class Launch:
    """One server as it would start. Holds secrets (``environment``): never log it."""

    spec: ServerSpec
    executable: str = ""  # the absolute path started; "" for a remote server or one not found
    target: str = ""  # its real path, past any link
    cwd: str = ""
    files: tuple[BoundFile, ...] = ()
    notes: tuple[str, ...] = ()  # what the user should weigh: loader keys, links, folders of the repository
    problem: str | None = None  # why it cannot start as written (not found, a file too large to bind)
    environment: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def config_path(self) -> str:
        return self.spec.config_path

    @property
    def digest(self) -> str:
        """sha256 of everything that decides what runs: the entry as written, the program, the cwd, bound files."""
        payload = {
            "form": _FORM,
            "entry": self.spec.written,
            "executable": self.executable,
            "target": self.target,
            "cwd": self.cwd,
            "files": [[f.path, f.sha256] for f in self.files],
        }
        return hashlib.sha256(_CANONICAL(payload).encode()).hexdigest()

    def runs(self, *, masked: bool = False) -> Runs:
        """What the user approves, whole: arguments and environment as written (``${VAR}`` unexpanded), nothing
        masked; a remote server's URL and headers with their credentials masked (nothing of theirs runs here).
        ``masked``: a snapshot's view, credential-shaped parts as ``***`` (``masked_view``)."""
        whole = self._runs()
        return masked_view(whole) if masked else whole

    def _runs(self) -> Runs:
        written = self.spec.written
        notes = (*self.notes, f"it cannot start: {self.problem}") if self.problem else self.notes
        if self.spec.transport != "stdio":
            headers = _masked_map(written.get("headers"))
            url = redact_url(str(written.get("url", "")))
            return Runs(self.spec.transport, url=url, headers=headers, notes=notes)
        return Runs(
            "stdio",
            command=str(written.get("command", "")),
            executable=self.executable,
            target=self.target if self.target != self.executable else "",
            args=tuple(entry_args(written)),
            cwd=self.cwd,
            env=_written_map(written.get("env")),
            files=tuple(f.shown() for f in self.files),
            notes=notes,
        )


def masked_view(runs: Runs) -> Runs:
    """``runs`` with the credential-shaped parts of its arguments and environment as ``***`` (a snapshot's view),
    flagged ``masked`` and with ``MASKED_NOTE`` when that hid anything."""
    if runs.transport != "stdio":
        return runs
    args = tuple(m.text for m in mask_args(list(runs.args)))
    env = tuple((key, mask_value(key, value).text) for key, value in runs.env)
    if (args, env) == (runs.args, runs.env):
        return runs
    return dataclasses.replace(runs, args=args, env=env, notes=(*runs.notes, MASKED_NOTE), masked=True)


def _written_map(value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict):
        return ()
    return tuple((str(k), v) for k, v in sorted(value.items()) if isinstance(v, str))


def _masked_map(value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict):
        return ()
    return tuple((str(k), mask_value(str(k), v).text) for k, v in sorted(value.items()) if isinstance(v, str))


class FileHashes:
    """sha256 of repository files, remembered by inode, size and change time (a rewrite changes ``st_ctime``)."""

    def __init__(self) -> None:
        self._known: dict[tuple[int, int, int, int, int], tuple[str, str | None]] = {}

    def bind(self, real: str, root: str, real_root: str, role: str) -> BoundFile:
        """Read ``real`` beneath ``root`` (``real_root``: its real path; no link followed out of it) and hash it.

        Raises:
            OSError: it cannot be read, or changed while it was read.
            ValueError: it is larger than :data:`MAX_BOUND_BYTES`.
        """
        try:  # a file hashed before: the same inode, size and change times (a swap for a link changes the inode)
            st = os.stat(real)
            known = self._known.get((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
        except (OSError, ValueError):
            known = None
        if known is not None:
            return BoundFile(real, role, known[0], st.st_size, known[1])
        with Walker() as walker:
            found = walker.resolve(real, root, real_root)
            fd, st = walker.open_file(found.real, (found.st.st_ino, found.st.st_dev))
            try:
                key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
                known = self._known.get(key)
                if known is None:
                    if st.st_size > MAX_BOUND_BYTES:
                        raise ValueError(f"{st.st_size} bytes, over the {MAX_BOUND_BYTES} bytes a bound file may have")
                    known = _digest(fd, st.st_size)
                    if len(self._known) > 4096:
                        self._known.clear()
                    self._known[key] = known
            finally:
                os.close(fd)
        return BoundFile(found.real, role, known[0], st.st_size, known[1])


def _digest(fd: int, size: int) -> tuple[str, str | None]:
    digest = hashlib.sha256()
    head = b""
    while chunk := os.read(fd, 1 << 20):
        digest.update(chunk)
        if len(head) <= MAX_KEPT_TEXT:
            head += chunk[: MAX_KEPT_TEXT + 1 - len(head)]
    text: str | None = None
    if size <= MAX_KEPT_TEXT and len(head) <= MAX_KEPT_TEXT and b"\0" not in head:
        try:
            text = head.decode("utf-8")
        except UnicodeDecodeError:
            text = None
    return digest.hexdigest(), text


def resolve(
    spec: ServerSpec,
    *,
    work_dir: str,
    environ: Mapping[str, str],
    inherit: Sequence[str] = (),
    hashes: FileHashes | None = None,
) -> Launch:
    """``spec`` as it would start from ``work_dir`` for a user whose environment is ``environ``.

    Reads file metadata and the repository files it binds (run it in a worker thread where it matters).
    """
    notes = tuple(f"env {key} {why}" for key, _ in spec.env if (why := loader_reason(key)) is not None)
    if spec.transport != "stdio":
        return Launch(spec, notes=notes)
    home = environ.get("HOME") or os.path.expanduser("~")
    environment = child_environment(environ, spec.env, inherit)
    declared = spec.cwd if spec.cwd and os.path.isabs(spec.cwd) else os.path.join(work_dir, spec.cwd or "")
    cwd = realpath(declared) if os.path.isdir(declared) else realpath(home)
    if not os.path.isdir(declared):
        notes += (f'cwd "{printable(spec.cwd or work_dir)}" is not a folder: it runs in the home folder',)
    found = _which(spec.command, environment.get("PATH", os.defpath), cwd)
    if found is None:
        # the command as written: ``${VAR}`` expanded here is the user's environment, shown to whoever sees the entry
        written = str(spec.written.get("command", spec.command))
        problem = f'command "{printable(written)}" not found (on the PATH it gets, from {cwd})'
        return Launch(spec, "", "", cwd, (), notes, problem, environment)
    target = realpath(found)
    binding = _Binding(spec.repository, hashes or FileHashes())
    inside = binding.real_repository
    if inside and is_within(realpath(os.path.dirname(found)), inside) and not is_within(target, inside):
        notes += (f"the program {printable(found)} is a link in the repository to {printable(target)}",)
    binding.file(target, "program")
    for index, arg in enumerate(spec.args, start=1):
        for candidate in _paths_in(arg):
            binding.argument(os.path.join(cwd, candidate), index)
    notes += tuple(binding.notes)
    runner = _loads_from_cwd(os.path.basename(found), spec.args)  # the name started: npx's target is npx-cli.js
    if runner and inside and is_within(cwd, inside):
        notes += (f"{runner} in {printable(cwd)}, a folder of the repository: that code is not bound",)
    return Launch(spec, found, target, cwd, tuple(binding.files), notes, binding.problem, environment)


_NODE_RUNNERS = ("npx", "pnpx", "bunx", "npm", "pnpm", "yarn", "bun", "node", "deno")


def _loads_from_cwd(program: str, args: Sequence[str]) -> str | None:
    """What ``program`` (its real name) run with ``args`` may load from its working folder unnamed, said for a
    note; None when nothing is known. Such code (a ``node_modules`` package ``npx`` picks first, the module of
    ``python -m``, the project ``uv run`` uses) is not bound: naming it could only be a guess."""
    name = re.sub(r"[-.\d]+$", "", program)  # python3.12, node-20 -> python, node
    if name in _NODE_RUNNERS:
        return f"{program} may run code it finds (a package of node_modules, a script named without its extension)"
    if name in ("python", "pypy") and "-m" in args:
        return f"{program} -m loads its module first from where it runs"
    if name == "uv" and "run" in args:
        return "uv run uses the project it finds"
    return None


def _which(command: str, path: str, cwd: str) -> str | None:
    """Where ``command`` is found as ``execvpe`` would find it with ``path``, relative names from ``cwd``."""
    if not command:
        return None
    if "/" in command:
        candidates = [os.path.join(cwd, command)]
    else:
        candidates = [os.path.join(cwd, folder or ".", command) for folder in path.split(os.pathsep)]
    for candidate in candidates:
        try:
            st = os.stat(candidate)
        except (OSError, ValueError):
            continue
        if stat.S_ISREG(st.st_mode) and os.access(candidate, os.X_OK):
            return os.path.normpath(candidate)
    return None


def _paths_in(arg: str) -> list[str]:
    """What in an argument may name a file: the whole of it, and the value of ``--flag=value``."""
    if not arg or "\0" in arg:
        return []
    out = [arg] if not arg.startswith("-") else []
    flag, eq, value = arg.partition("=")
    if eq and flag.startswith("-") and value:
        out.append(value)
    return out


class _Binding:
    """The repository files one entry binds, and what could not be bound."""

    def __init__(self, repository: str, hashes: FileHashes) -> None:
        self.repository = repository
        self.real_repository = realpath(repository) if repository else ""
        self.hashes = hashes
        self.files: list[BoundFile] = []
        self.notes: list[str] = []
        self.problem: str | None = None

    def file(self, real: str, role: str) -> None:
        if not self.repository or not is_within(real, self.real_repository):
            return
        if any(f.path == real for f in self.files):
            return
        if len(self.files) >= MAX_BOUND_FILES:
            self.problem = f"it names more than {MAX_BOUND_FILES} files of the repository: too many to bind"
            return
        try:
            self.files.append(self.hashes.bind(real, self.repository, self.real_repository, role))
        except (OSError, ValueError) as exc:
            self.problem = f"{printable(real)} ({role}) cannot be bound to the approval: {_reason(exc)}"

    def argument(self, path: str, index: int) -> None:
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            return
        real = realpath(path)
        if stat.S_ISREG(st.st_mode):
            self.file(real, f"argument {index}")
        elif stat.S_ISDIR(st.st_mode) and self.repository and is_within(real, self.real_repository):
            self.notes.append(
                f"argument {index} names the repository folder {printable(real)}: what runs from there is not"
                " bound by this approval"
            )


def _reason(exc: Exception) -> str:
    return exc.strerror or str(exc) if isinstance(exc, OSError) else str(exc)


def describe(runs: Runs, digest: str = "") -> list[str]:
    """``runs`` as lines for a terminal (``label  value``), every character shown (``printable``)."""
    lines: list[tuple[str, str]] = []
    if runs.transport == "stdio":
        lines.append(("runs", " ".join(quoted(w) for w in (runs.executable or runs.command, *runs.args))))
        if runs.target:
            lines.append(("program", f"{runs.executable} is a link to {runs.target}"))
        if runs.executable and runs.executable != runs.command:
            lines.append(("command", f"{runs.command} (as written)"))
        lines.append(("cwd", runs.cwd))
        lines += [("env", f"{key}={value}") for key, value in runs.env]
        lines += [("file", f"{f.path} ({f.role}, {f.size:,} bytes, sha256 {f.sha256})") for f in runs.files]
    else:
        lines.append(("url", f"{runs.url} ({runs.transport})"))
        lines += [("header", f"{key}: {value}") for key, value in runs.headers]
    lines += [("note", note) for note in runs.notes]
    if digest:
        lines.append(("digest", digest))
    return [f"{label:<8} {printable(value)}" for label, value in lines]


def changes(before: Runs | None, texts: Mapping[str, str], launch: Launch, *, masked: bool = False) -> str:
    """What changed in what a server runs since the approval that recorded ``before`` (and its files' ``texts``).

    The lines of :func:`describe` that differ, then a unified diff of each bound file whose content
    changed (when both texts are known); at most :data:`MAX_CHANGES_CHARS` characters.
    """
    if before is None:
        return ""
    # a snapshot's diff masks as the snapshot shows; so does one against an approval recorded masked (before
    # approvals were shown whole), else every credential it holds would read as changed
    masked = masked or any(MASK in word for word in (*before.args, *(value for _, value in before.env)))
    if masked:
        before = masked_view(before)
    after = launch.runs(masked=masked)
    out = list(difflib.unified_diff(describe(before), describe(after), "approved", "now", lineterm="", n=0))
    now = {f.path: f for f in launch.files}
    for old in before.files:
        new = now.get(old.path)
        if new is None or new.sha256 == old.sha256:
            continue
        if old.path in texts and new.text is not None:
            old_lines, new_lines = texts[old.path].splitlines(), new.text.splitlines()
            out += difflib.unified_diff(old_lines, new_lines, "approved " + old.path, "now " + old.path, lineterm="")
        else:
            out.append(f"{old.path}: content changed ({old.size:,} -> {new.size:,} bytes)")
    text = "\n".join(printable(line) for line in out)
    if len(text) > MAX_CHANGES_CHARS:
        text = text[: MAX_CHANGES_CHARS - 40].rsplit("\n", 1)[0] + f"\n... ({len(text):,} characters in all)"
    return text


def approve_command(work_dir: str, launches: Sequence[Launch]) -> str:
    """The command that approves ``launches`` as they are now, to paste into a shell.

    It names each digest (``--digest``): run later, it approves nothing that changed since it was
    printed. Printable whatever the names hold (see :func:`shell_word`).
    """
    names = " ".join(shell_word(launch.name) for launch in launches)
    digests = " ".join(f"--digest {launch.digest}" for launch in launches)
    return f"agentcontext mcp trust --work-dir {shell_word(work_dir)} {names} {digests}"


def shell_word(word: str) -> str:
    """``shlex.quote``; a word with a control or format character in bash's ``$'…'``, each such character as
    ``\\xHH``/``\\uHHHH``, so the command shows every character and still names the server when pasted."""
    if word.isprintable():
        return shlex.quote(word)
    return "$'" + "".join(_ansi_c(char) for char in word) + "'"


def _ansi_c(char: str) -> str:
    if char in "\\'":
        return "\\" + char
    if char.isprintable():
        return char
    point = ord(char)
    return f"\\x{point:02x}" if point < 0x80 else f"\\u{point:04x}" if point <= 0xFFFF else f"\\U{point:08x}"
