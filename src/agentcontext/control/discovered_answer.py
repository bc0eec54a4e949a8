"""Asking a chat's workspace agent which instruction files apply to the paths the chat touched.

The paths are checked here first (count, length, NUL, ``..``), then sent to the agent's
``/api/v0/context/instructions`` in requests of ``AGENT_BATCH`` paths, sent together. The
agent's answer is a hostile peer's JSON: it is checked and bounded, and each file it names
becomes an instruction file here, whatever the answer says it is, so no answer can make a
skill or an MCP config out of it. Files without text, or without an absolute path, are left
out.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentcontext import storable
from agentcontext.control.agent_link import AgentAddress, AgentLink, AgentReplyError
from agentcontext.errors import InvalidRequestError, UnavailableError
from agentcontext.resource import Kind, Load, Resource, Scope, Status

MAX_PATHS = 256  # paths one touched call may name
MAX_PATH_CHARS = 4096
AGENT_BATCH = 32  # the agent's ``ondemand.max_paths``
MAX_CAUSES = 64  # paths kept as the causes of one discovered row (the first ones)
MAX_DISCOVERED = 512  # discovered rows one chat may hold
MAX_DISCOVERED_BYTES = 1 << 20  # and their bytes, at most (as much as one answer of the agent's may carry)
MAX_FILE_CHARS = 256 * 1024  # one file's text in an answer (the agent caps files at 64 KiB)


def check_paths(paths: Sequence[str]) -> list[str]:
    """The paths to ask about, each once, in order.

    Raises:
        InvalidRequestError: none, too many, empty, too long, a NUL, or a ``..`` segment (named).
    """
    if not paths:
        raise InvalidRequestError("paths is empty: name at least one path the chat touched")
    if len(paths) > MAX_PATHS:
        raise InvalidRequestError(f"{len(paths)} paths in one call: at most {MAX_PATHS}")
    for path in paths:
        if not path or len(path) > MAX_PATH_CHARS or "\x00" in path:
            raise InvalidRequestError(f"a path is empty, longer than {MAX_PATH_CHARS} characters, or holds a NUL")
        if ".." in path.replace("\\", "/").split("/"):
            raise InvalidRequestError(f'path "{path[:200]}" has a ".." segment: name paths inside the work dir')
    return list(dict.fromkeys(paths))


# --- the agent's answer (a hostile peer's JSON: checked, bounded) ------------------------------------


class _File(BaseModel):
    model_config = ConfigDict(extra="ignore")

    path: str = Field(min_length=1, max_length=MAX_PATH_CHARS)
    scope: Scope
    status: Status
    load: dict[str, Any] | None = None
    size_bytes: int = Field(default=0, ge=0)
    content_hash: str = Field(default="", max_length=64)
    warnings: list[str] = Field(default_factory=list, max_length=64)
    for_: list[str] = Field(default_factory=list, alias="for", max_length=AGENT_BATCH)
    reason: str = Field(default="", max_length=4096)
    content: str | None = Field(default=None, max_length=MAX_FILE_CHARS)


class _Refusal(BaseModel):
    model_config = ConfigDict(extra="ignore")

    path: str = Field(max_length=MAX_PATH_CHARS + 16)
    reason: str = Field(max_length=4096)


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    paths: list[str] = Field(default_factory=list, max_length=AGENT_BATCH)
    files: list[_File] = Field(default_factory=list, max_length=1024)
    excluded: list[_File] = Field(default_factory=list, max_length=1024)
    refused: list[_Refusal] = Field(default_factory=list, max_length=AGENT_BATCH)


@dataclass(frozen=True, slots=True)
class Found:
    """An instruction file the agent says applies, and the asked paths it applies to."""

    resource: Resource
    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Answer:
    """What the agent answered for some paths: the files that load, those past its cap, the paths refused."""

    asked: tuple[str, ...]
    files: tuple[Found, ...] = ()
    excluded: tuple[tuple[str, str], ...] = ()  # (path, reason)
    refused: tuple[tuple[str, str], ...] = ()  # (path, reason)


def _found(file: _File) -> Found | None:
    """An instruction file, always (never a skill or an MCP config); None unless it is absolute and carries text."""
    if not posixpath.isabs(file.path) or not file.status.carries_content or file.content is None:
        return None
    try:
        load = Load.from_dict(file.load) if file.load else None
    except (KeyError, ValueError, TypeError):
        load = None
    resource = Resource(
        Kind.INSTRUCTION_FILE, file.path, file.scope, file.status, file.size_bytes, file.content_hash,
        file.content, None, tuple(w[:1024] for w in file.warnings), load=load,
    )  # fmt: skip
    return Found(resource, tuple(file.for_))


def _unstorable(file: _File) -> str | None:
    """Why no database would store the file as answered (a NUL, a lone surrogate, a path past the bound), or None."""
    if len(file.path.encode("utf-8", "surrogatepass")) > storable.MAX_PATH_BYTES:
        return f"its path is over the {storable.MAX_PATH_BYTES:,} bytes a snapshot holds"
    for text in (file.path, file.content or "", *file.warnings):
        found = storable.problem(text)
        if found is not None:
            return f"the agent's answer holds {found}, which no database stores"
    return None


def parse(body: dict[str, Any], asked: Sequence[str]) -> Answer:
    """Raises: UnavailableError (the agent's answer is not what its API documents)."""
    try:
        answer = _Answer.model_validate(body)
    except ValidationError as exc:
        raise UnavailableError(f"the workspace agent's answer is malformed: {exc.errors()[0]['msg']}") from None
    held = [(file, _unstorable(file)) for file in answer.files]
    files = tuple(found for found in (_found(file) for file, why in held if why is None) if found is not None)
    odd = tuple((storable.shown(file.path)[: storable.MAX_PATH_BYTES], why) for file, why in held if why is not None)
    excluded = (*odd, *((storable.shown(f.path)[: storable.MAX_PATH_BYTES], f.reason) for f in answer.excluded))
    refused = tuple((r.path, r.reason) for r in answer.refused)
    return Answer(tuple(asked), files, excluded, refused)


def merge(answers: Iterable[Answer]) -> Answer:
    """One answer for several requests: each file once (in first-seen order), its paths joined."""
    asked: list[str] = []
    files: dict[str, tuple[Resource, list[str]]] = {}
    excluded: dict[str, str] = {}
    refused: list[tuple[str, str]] = []
    for answer in answers:
        asked += answer.asked
        for found in answer.files:
            _, paths = files.setdefault(found.resource.path, (found.resource, []))
            paths += [p for p in found.paths if p not in paths]
        for path, reason in answer.excluded:
            excluded.setdefault(path, reason)
        refused += answer.refused
    merged = tuple(Found(resource, tuple(paths)) for resource, paths in files.values())
    return Answer(tuple(asked), merged, tuple(excluded.items()), tuple(refused))


async def ask(link: AgentLink, address: AgentAddress | None, paths: Sequence[str]) -> Answer:
    """The agent's answer for ``paths``, in requests of ``AGENT_BATCH`` paths sent together.

    Raises:
        UnavailableError: the agent cannot be reached, or gave up. InvalidRequestError: it refused the request.
    """
    if address is None:
        raise UnavailableError("the chat's workspace agent has not said where it can be reached")
    batches = [list(paths[i : i + AGENT_BATCH]) for i in range(0, len(paths), AGENT_BATCH)]
    answers: list[Answer | None] = [None] * len(batches)

    async def one(index: int) -> None:
        try:
            body = await link.instructions(address, batches[index])
        except AgentReplyError as exc:
            if exc.status == 400:
                raise InvalidRequestError(f"the workspace agent refused the paths: {exc.detail or exc}") from None
            raise UnavailableError(f"the workspace agent could not answer: {exc}") from None
        answers[index] = parse(body, batches[index])

    if len(batches) == 1:
        await one(0)
    else:
        try:
            async with anyio.create_task_group() as group:
                for index in range(len(batches)):
                    group.start_soon(one, index)
        except ExceptionGroup as failed:  # the first failure says it (the others were cancelled with it)
            raise failed.exceptions[0] from None
    return merge(answer for answer in answers if answer is not None)
