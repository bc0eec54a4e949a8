"""What a snapshot can carry: text a database stores, within the sizes the control plane takes.

The control plane refuses a push whole when one field breaks its contract (``wire.sync``, whose
bounds are these): a NUL (PostgreSQL refuses one in text), a lone surrogate (no database holds
one), a path over :data:`MAX_PATH_BYTES`, a name, error or warning over :data:`MAX_TEXT_BYTES`, a
load with more than :data:`MAX_LOAD_ITEMS` globs. A repository can put each of them in front of the
scan: a file name that is not UTF-8 (Python lists it with surrogates standing for its bytes), a
``\\u0000`` escape in a skill's YAML, folders nested past 1 KiB of path, a rule with a thousand
globs. :func:`carried` makes such a resource ``invalid`` (or cuts our own text about it), said,
so one file never keeps a workspace from syncing; :func:`plain` answers for the usual resource in
a few C calls.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from typing import Any

from agentcontext.resource import Load, Resource, Status

MAX_RESOURCES = 1000  # in one push (Snapshot.within: the rest left out, counted)
MAX_PATH_BYTES = 1024  # a path, an importer, a glob
MAX_TEXT_BYTES = 4096  # a name, an error, a warning, a load's reason
MAX_LOAD_ITEMS = 1024  # a load's globs, or its chain of importers


def problem(text: str) -> str | None:
    """What in ``text`` no database stores, or None."""
    if "\x00" in text:
        return "a NUL character (\\u0000)"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return "a lone surrogate (not valid Unicode)"
    return None


def shown(text: str) -> str:
    """``text`` as it can be stored and shown: a name's bytes that are not UTF-8 as ``\\xff``, a NUL as ``\\x00``."""
    try:
        raw = text.encode("utf-8", "surrogateescape")  # a file name's own bytes, as the system listed them
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "backslashreplace")
    return raw.decode("utf-8", "backslashreplace").replace("\x00", "\\x00")


def plain(resource: Resource) -> bool:
    """Whether ``resource`` is surely carried as it is: short ASCII text, no NUL, no warning, a load of few paths.
    (Its content was read without NUL: the readers refuse a file holding one.) Runs once a resource a pass."""
    path, name, error = resource.path, resource.name or "", resource.error or ""
    joined = f"{path}{name}{error}{resource.description or ''}"  # one C pass for ASCII and NUL
    if not joined.isascii() or "\x00" in joined or resource.warnings:
        return False
    if len(path) > MAX_PATH_BYTES or len(name) > MAX_TEXT_BYTES or len(error) > MAX_TEXT_BYTES:
        return False
    load = resource.load
    if load is None:
        return True
    if load.globs or load.chain or load.importer is not None or load.root is not None:
        return _plain_load(load)
    return _short(load.reason)


def _plain_load(load: Load) -> bool:
    named = (*load.globs, *load.chain, load.importer or "", load.root or "")
    joined = "".join(named)  # a few C calls for the paths and globs of a rule or an import
    return (
        len(named) <= MAX_LOAD_ITEMS
        and joined.isascii()
        and "\x00" not in joined
        and max(map(len, named)) <= MAX_PATH_BYTES
        and _short(load.reason)
    )


def _short(text: str | None) -> bool:
    return text is None or (text.isascii() and len(text) <= MAX_TEXT_BYTES and "\x00" not in text)


def carried(resource: Resource) -> Resource:
    """``resource`` as a snapshot can carry it: ``invalid`` with the reason when a field of its own cannot be,
    our own text about it (its error, warnings, a load's reason) escaped and cut."""
    refused = _refused(resource)
    if refused is not None:
        path, why = refused
        return Resource(resource.kind, path, resource.scope, Status.INVALID, resource.size_bytes,
                        resource.content_hash, error=why)  # fmt: skip
    error, warnings, load = resource.error, resource.warnings, resource.load
    if error is not None and (text := said(error)) is not error:
        resource = resource._replace(error=text)
    if warnings and (texts := tuple(map(said, warnings))) != warnings:
        resource = resource._replace(warnings=texts)
    if load is not None and load.reason is not None and (text := said(load.reason)) is not load.reason:
        resource = resource._replace(load=dataclasses.replace(load, reason=text))
    return resource


def _refused(resource: Resource) -> tuple[str, str] | None:
    """The path to list and why, when a field of the resource's own cannot be carried."""
    path = resource.path
    if problem(path) is not None:
        why = "its path is not UTF-8 (its bytes shown escaped), which no snapshot holds: not served; rename it"
        return _path(shown(path)), why
    size = len(path.encode("utf-8"))
    if size > MAX_PATH_BYTES:
        why = f"its path is {size:,} bytes long, over the {MAX_PATH_BYTES:,} a snapshot holds: not served"
        return _path(path), why
    for field, text in (("name", resource.name), ("description", resource.description)):
        found = None if text is None else problem(text)
        if found is not None:
            return path, f"its {field} holds {found}, which no database stores: not served; remove it"
    name = resource.name
    if name is not None and len(name.encode("utf-8")) > MAX_TEXT_BYTES:
        return path, f"its name is over the {MAX_TEXT_BYTES:,} bytes a snapshot holds: not served"
    return None if resource.load is None else _load_refused(path, resource.load)


def _load_refused(path: str, load: Load) -> tuple[str, str] | None:
    if len(load.globs) > MAX_LOAD_ITEMS or len(load.chain) > MAX_LOAD_ITEMS:
        return path, f"it names more than {MAX_LOAD_ITEMS:,} globs or importers, which a snapshot does not hold"
    named = [*load.globs, *load.chain, load.importer or "", load.root or ""]
    if any(problem(item) is not None or len(item.encode("utf-8")) > MAX_PATH_BYTES for item in named):
        return path, f"a glob or importer of it is not UTF-8 or over {MAX_PATH_BYTES:,} bytes: not served"
    return None


def _path(path: str) -> str:
    """``path`` within :data:`MAX_PATH_BYTES`: cut, with a digest of the whole, so two long paths stay two."""
    data = path.encode("utf-8")
    if len(data) <= MAX_PATH_BYTES:
        return path
    digest = hashlib.sha256(data).hexdigest()[:16]
    kept = data[: MAX_PATH_BYTES - 64].decode("utf-8", "ignore")
    return f"{kept}…[{len(data):,} bytes, sha256 {digest}]"


def said(text: str) -> str:
    """Our own text about a resource (it may quote a path) as stored: escaped, within :data:`MAX_TEXT_BYTES` (the
    same object when it already is)."""
    if problem(text) is not None:
        text = shown(text)
    elif len(text) * 4 <= MAX_TEXT_BYTES:  # within the bound, however many bytes a character takes
        return text
    data = text.encode("utf-8")
    if len(data) <= MAX_TEXT_BYTES:
        return text
    return data[: MAX_TEXT_BYTES - 32].decode("utf-8", "ignore") + f"… [cut at {MAX_TEXT_BYTES:,} bytes]"


def scrub(value: Any) -> Any:
    """``value`` with every lone surrogate replaced by U+FFFD, as Go's JSON decoder reads them.

    JSON may escape half a surrogate pair (``"\\udcff"``); such a string cannot be encoded to
    UTF-8, so it could reach neither the workspace nor an answer.
    """
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return value
    if isinstance(value, Mapping):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v) for v in value]
    return value
