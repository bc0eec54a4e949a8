"""Linux's ``openat2(2)``: a file below a directory descriptor in one system call, no link followed.

A skills scan reads ``<folder>/SKILL.md`` in every folder of a listing. The portable safe way
(:mod:`agentcontext.beneath`) opens the folder without following it, looks at the file, opens
and checks that, then closes both: seven system calls a skill. ``openat2`` with
``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`` lets the kernel refuse any
link and any way out on each component, so the folder need not be opened at all. The scan's
fast path (``Reader.load_each``) still looks at the file first with ``fstatat`` (a FIFO or
device is never opened on purpose) and keeps what this module read only when it is exactly the
size that look saw; anything else (a link, a swap, a change, an error, no ``openat2``) goes
the checked way. bench/RESULTS.md has what it saves.
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys
from collections.abc import Callable

from agentcontext.beneath import AUDIT_EVENT, FILE_FLAGS

# openat2's number where it is 437 (the unified table of Linux 5.1+); MIPS, Alpha and others number it
# apart, and calling a wrong number would run another system call: there, the portable walk
_SYS_OPENAT2 = 437
_MACHINES = frozenset(
    {"x86_64", "i386", "i686", "aarch64", "armv7l", "armv8l", "riscv64", "ppc64le", "ppc64", "s390x", "loongarch64"}
)
_RESOLVE_NO_MAGICLINKS, _RESOLVE_NO_SYMLINKS, _RESOLVE_BENEATH = 0x02, 0x04, 0x08
_AT_FDCWD = -100
_UNSUPPORTED = (errno.ENOSYS, errno.EPERM, errno.EINVAL, errno.E2BIG)  # old kernel, seccomp filter


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


def _bind() -> tuple[Callable[..., int], object, object] | None:
    """libc's ``syscall`` with openat2's ``how`` (and its size) built once, or None where this kernel (or a
    sandbox) has no openat2."""
    if not sys.platform.startswith("linux") or os.uname().machine not in _MACHINES:
        return None
    try:
        syscall = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None
    syscall.restype = ctypes.c_long
    how = _OpenHow(FILE_FLAGS, 0, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS)
    how_ref, how_size = ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how))  # byref keeps ``how`` alive
    fd = syscall(_SYS_OPENAT2, _AT_FDCWD, b".", how_ref, how_size)
    if fd >= 0:
        os.close(fd)
    elif ctypes.get_errno() in _UNSUPPORTED:
        return None
    return syscall, how_ref, how_size


_BOUND = _bind()
AVAILABLE = _BOUND is not None
_syscall, _how, _how_size = _BOUND or (None, None, None)
_encoding, _errors = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()  # os.fsencode's, bound once


def read_if_sized(dfd: int, relative: str, size: int, limit: int) -> bytes | None:
    """At most ``limit`` bytes of the file at ``relative`` below ``dfd``, if it holds the ``size`` a look saw.

    None when it cannot tell: no ``openat2`` here, a link or ``..`` on the way, a file that
    is gone, unreadable, shorter or longer than ``size``, or anything but a file that reads.
    """
    if _syscall is None:
        return None
    fd = _syscall(_SYS_OPENAT2, dfd, relative.encode(_encoding, _errors), _how, _how_size)
    if fd < 0:
        return None
    try:
        sys.audit(AUDIT_EVENT, fd)
        data = os.read(fd, limit if size >= limit else size + 1)  # size + 1: a file that grew shows it
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) == (size if size < limit else limit) else None
