"""Text a snapshot can carry: no NUL and no lone surrogate, which no database stores.

PostgreSQL refuses a NUL in text, and no database (nor UTF-8) holds a lone surrogate: the control
plane refuses a push holding either (``wire.sync``), whole. A repository can put both in front of
the scan: a file name that is not UTF-8 (Python lists it with surrogates standing for its bytes), a
``\\u0000`` escape in a skill's YAML, a UTF-16 file an agent would send as text. The snapshot says
such a resource is ``invalid`` instead (:func:`agentcontext.snapshot.build`), so one file never
keeps a workspace from syncing.
"""

from __future__ import annotations


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
