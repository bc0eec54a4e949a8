"""What an MCP session sees: one project, or one chosen per session under an access root.

Single-project mode serves the work dir, with Codex's upward walk to the project root.
Multi-project mode makes the given folder an *access root*: each session binds once to a
folder beneath it, and that folder is the exact project root — no marker walk, so nothing
above it is read. A session is identified by ``_meta["openai/session"]`` when the client
sends one (ChatGPT), else by its MCP transport session (the ``mcp-session-id`` header over
HTTP, the process itself over stdio). Bindings live as long as the server.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentcontext.errors import NotFoundError, UnsafePathError
from agentcontext.fs.files import is_within
from agentcontext.fs.paths import absolute
from agentcontext.instructions.applied import Applicable
from agentcontext.scan import Scanner, ScanResult
from agentcontext.settings.config import Config, load_config

SESSION_META_KEY = "openai/session"


class Project:
    """One project root with a warm scanner; thread-safe, so scans can run off the event loop."""

    def __init__(self, root: str, config: Config, environ: Mapping[str, str]) -> None:
        self.root = root
        self.config = config
        self._scanner = Scanner(root, config, environ=environ)
        self._lock = threading.Lock()
        self._last: tuple[float, ScanResult] | None = None

    def recent(self, max_age: float) -> ScanResult | None:
        """The last snapshot if it is at most ``max_age`` seconds old (no I/O, no lock)."""
        last = self._last
        if last is not None and time.monotonic() - last[0] <= max_age:
            return last[1]
        return None

    def applicable(self, paths: list[str], max_age: float = 0.0) -> Applicable:
        """What applies to ``paths`` after a scan no older than ``max_age`` (:mod:`agentcontext.instructions.ondemand`).

        Raises:
            InvalidRequestError: too many paths. UnavailableError: the lookup ran out of time.
        """
        return self._scanner.applicable(paths, result=self.scan(max_age))

    def scan(self, max_age: float = 0.0) -> ScanResult:
        """A snapshot no older than ``max_age`` seconds; 0 re-checks the tree (cheap when unchanged).

        Sessions start from ``max_age=0``; tool calls accept a second-old scan, so a burst of
        calls costs one re-check of a large tree rather than one each.
        """
        with self._lock:
            now = time.monotonic()
            if self._last is not None and now - self._last[0] <= max_age:
                return self._last[1]
            result = self._scanner.run()
            self._last = (now, result)
            return result


@dataclass(frozen=True, slots=True)
class Binding:
    project: Project
    scope: str  # "conversation" or "transport session"


class Workspace:
    """The projects a server serves, and (in multi-project mode) which session uses which."""

    def __init__(
        self,
        work_dir: str,
        *,
        multi_project: bool = False,
        config: Config | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.environ = dict(os.environ if environ is None else environ)
        self.root = absolute(work_dir)
        self.multi_project = multi_project
        self._base_config = config
        self._projects: dict[str, Project] = {}
        self._bindings: dict[str, Binding] = {}
        self._lock = threading.Lock()
        self.single = None if multi_project else Project(self.root, self._config_for(self.root), self.environ)

    def _config_for(self, root: str) -> Config:
        if self._base_config is not None and not self.multi_project:
            return self._base_config
        overrides: dict[str, Any] = {"project_doc.root_markers": []} if self.multi_project else {}
        if self._base_config is not None:
            overrides["profile"] = self._base_config.profile
        return load_config(root, environ=self.environ, overrides=overrides)

    def project_for(self, session: str | None) -> Project | None:
        """The session's project: the only one in single mode, its binding in multi mode."""
        if self.single is not None:
            return self.single
        if session is None:
            return None
        binding = self._bindings.get(session)
        return binding.project if binding else None

    def list_projects(self, query: str = "", limit: int = 50) -> list[tuple[str, str]]:
        """Folders directly under the access root: ``(selector, absolute path)``, by name."""
        found: list[tuple[str, str]] = []
        try:
            names = sorted(os.listdir(self.root))
        except OSError:
            return []
        for name in names:
            path = os.path.join(self.root, name)
            if name.startswith(".") or not os.path.isdir(path):
                continue
            if not is_within(os.path.realpath(path), os.path.realpath(self.root)):
                continue
            if query and query.casefold() not in name.casefold():
                continue
            found.append((name, path))
        return found[:limit]

    def bind(self, session: str | None, selector: str, scope: str) -> tuple[Project, bool]:
        """Bind ``session`` to the folder ``selector`` names; True when newly bound.

        Raises:
            UnsafePathError: the folder is outside the access root or is not a directory.
            NotFoundError: the folder does not exist.
        """
        path = self.resolve(selector)
        if session is None:
            raise UnsafePathError(
                "This client sends no session id, so a project cannot stay selected between requests: "
                f'send `_meta["{SESSION_META_KEY}"]` with each request, or use a 2025 protocol session.'
            )
        with self._lock:
            current = self._bindings.get(session)
            if current is not None:
                if current.project.root == path:
                    return current.project, False
                raise UnsafePathError(
                    f"This {scope} is already bound to project root `{current.project.root}` and cannot "
                    f"switch to `{path}`. Start a new conversation for another project."
                )
            project = self._projects.get(path)
            if project is None:
                project = Project(path, self._config_for(path), self.environ)
                self._projects[path] = project
            self._bindings[session] = Binding(project, scope)
            return project, True

    def resolve(self, selector: str) -> str:
        """The canonical folder a selector names, checked to be a directory inside the root.

        Raises:
            UnsafePathError: empty, outside the access root, or not a directory.
            NotFoundError: it does not exist.
        """
        text = selector.strip()
        if not text:
            raise UnsafePathError("path must be a non-empty string")
        candidate = text if os.path.isabs(text) else os.path.join(self.root, text)
        try:
            real = os.path.realpath(candidate, strict=True)
        except OSError as exc:
            raise NotFoundError(
                f"Project root does not exist or cannot be resolved: {candidate}: {exc.strerror or exc}"
            ) from None
        if not is_within(real, os.path.realpath(self.root)):
            raise UnsafePathError(f"Project root escapes the configured access root: {real}")
        if not os.path.isdir(real):
            raise UnsafePathError(f"Project root is not a directory: {real}")
        return real


def session_key(meta: Mapping[str, object] | None, transport_session: str | None) -> tuple[str | None, str]:
    """A key for a session's binding (None when the request belongs to no session) and its kind.

    The conversation id is hashed, so it is never stored as given.
    """
    value = (meta or {}).get(SESSION_META_KEY)
    if isinstance(value, str) and value.strip():
        digest = hashlib.sha256(b"agentcontext/openai-session/v1\0" + value.strip().encode()).hexdigest()
        return f"conversation:{digest}", "conversation"
    if transport_session is None:
        return None, "request (the client sends no session id)"
    return f"transport:{transport_session}", "transport session"
