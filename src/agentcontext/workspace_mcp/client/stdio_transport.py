"""A stdio MCP server as the SDK's ``Transport``: it owns the process group, the pipes and a capped reader.

The SDK's ``Transport`` is an async context manager yielding ``(read stream, write
stream)``. This one spawns the server as the leader of a new session and process group,
with three pipes we hold the other ends of, read and written without threads:

* stdout is read in chunks and split into newline-delimited JSON-RPC messages; a line
  longer than the message cap is cut as it is read (:mod:`agentcontext.workspace_mcp.client.oversize`):
  the rest of it is counted and dropped, never buffered, and the cut message is replaced
  by a result with a visible marker (an answer to ``tools/call``) or an error;
* stdin carries our messages; the requests among them are remembered until answered, so
  a cut answer can still be matched to its request;
* stderr's last :data:`STDERR_TAIL_BYTES` are kept for reports (:attr:`stderr_tail`).

Shutdown (the MCP lifecycle's order): stdin is closed, the server gets ``grace`` seconds
to exit, then the group gets SIGTERM and, 2 seconds later, SIGKILL. Whatever is left of
the group is killed even when the server exited promptly, so its own children (a
``sleep``, a language server) never outlive it. Everything runs shielded and bounded:
a cancelled caller can neither leak the process nor hang on it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType

import anyio
import anyio.abc
import anyio.lowlevel
import mcp.types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage

from agentcontext.workspace_mcp.client.oversize import Overflow, Requests, replacement

log = logging.getLogger("agentcontext.mcp.stdio")
CHUNK = 64 * 1024
STDERR_TAIL_BYTES = 4096
TERM_GRACE = 2.0  # seconds between SIGTERM and SIGKILL
EXIT_NOTICE = 0.5  # seconds a server whose output ended gets to be seen exiting by itself
_POLL = 0.01


@dataclass(frozen=True, slots=True)
class StdioCommand:
    """What to run: the whole environment is given (nothing is inherited implicitly)."""

    command: str
    args: Sequence[str]
    env: Mapping[str, str]
    cwd: str


class StdioTransport:
    """One stdio server's process and pipes; use as ``Client(StdioTransport(...))``."""

    def __init__(self, command: StdioCommand, *, max_message_bytes: int, output_budget: int, grace: float = 2.0):
        self.command = command
        self.max_message_bytes = max_message_bytes
        self.output_budget = output_budget
        self.grace = grace
        self.pid: int | None = None
        self.exit_code: int | None = None  # when it ended by itself, before we stopped it (negative: a signal's)
        self._stdout_ended = False
        self.cut_messages = 0  # messages over the cap (replaced or dropped)
        self._stderr: deque[bytes] = deque()
        self._stderr_size = 0
        self._requests = Requests()
        self._context: contextlib.AbstractAsyncContextManager[TransportStreams] | None = None

    @property
    def stderr_tail(self) -> str:
        data = b"".join(self._stderr)[-STDERR_TAIL_BYTES:]
        return data.decode("utf-8", errors="replace").strip()

    async def __aenter__(self) -> TransportStreams:
        self._context = self._session()
        return await self._context.__aenter__()

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        context, self._context = self._context, None
        return await context.__aexit__(kind, exc, tb) if context is not None else None

    @contextlib.asynccontextmanager
    async def _session(self) -> AsyncIterator[TransportStreams]:
        pipes = _Pipes()
        try:
            process = await anyio.open_process(
                [self.command.command, *self.command.args],
                stdin=pipes.child_stdin,
                stdout=pipes.child_stdout,
                stderr=pipes.child_stderr,
                env=dict(self.command.env),
                cwd=self.command.cwd,
                start_new_session=True,
            )
        except BaseException:
            pipes.close_all()
            raise
        pipes.close_child_ends()
        self.pid = process.pid
        read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
        async with anyio.create_task_group() as group:
            group.start_soon(self._read_stdout, pipes.stdout, read_writer)
            group.start_soon(self._write_stdin, pipes.stdin, write_reader, read_writer)
            group.start_soon(self._read_stderr, pipes.stderr)
            try:
                yield read_stream, write_stream
            finally:
                with anyio.CancelScope(shield=True):
                    # its output ended first: did it exit by itself (a crash), before we close its input?
                    if self._stdout_ended and await _exited(process, EXIT_NOTICE):
                        self.exit_code = process.returncode
                    await write_stream.aclose()
                    pipes.close_stdin()
                    await self._stop(process)
                    group.cancel_scope.cancel()
        pipes.close_all()
        await read_stream.aclose()

    async def _stop(self, process: anyio.abc.Process) -> None:
        """Wait out the grace period, then SIGTERM and SIGKILL the group; its leftovers are always killed."""
        if not await _exited(process, self.grace):
            _signal_group(process.pid, signal.SIGTERM)
            if not await _exited(process, TERM_GRACE):
                _signal_group(process.pid, signal.SIGKILL)
        _signal_group(process.pid, signal.SIGKILL)  # the server's own children
        with anyio.move_on_after(TERM_GRACE):
            await process.wait()

    async def _read_stdout(self, fd: int, sink: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        """Split stdout into messages, each at most the cap; after the session is gone, keep draining."""
        cap = self.max_message_bytes
        line = bytearray()
        overflow: Overflow | None = None
        async with sink:
            while chunk := await _read(fd):
                start = 0
                while True:
                    end = chunk.find(b"\n", start)
                    piece = chunk[start : end if end >= 0 else len(chunk)]
                    if overflow is not None:
                        overflow.add(piece)
                    elif len(line) + len(piece) > cap:
                        taken = cap - len(line)
                        line += piece[:taken]
                        overflow = Overflow(bytes(line))
                        overflow.add(piece[taken:])
                        line.clear()
                    else:
                        line += piece
                    if end < 0:
                        break
                    message = self._cut(overflow) if overflow is not None else self._parse(bytes(line))
                    overflow = None
                    line.clear()
                    start = end + 1
                    if message is not None:
                        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                            await sink.send(message)
            self._stdout_ended = True

    def _parse(self, line: bytes) -> SessionMessage | Exception | None:
        if not line.strip():
            return None
        try:
            message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValueError as exc:
            return exc  # the session reports it; the connection goes on
        self._requests.answered(message)
        return SessionMessage(message)

    def _cut(self, overflow: Overflow) -> SessionMessage | None:
        self.cut_messages += 1
        message = replacement(overflow, self.max_message_bytes, self._requests, self.output_budget)
        if message is None:
            if self.cut_messages <= 3 or self.cut_messages % 1000 == 0:  # a flood of them is not a flood of lines
                log.warning(
                    "dropped a %d-byte message over the %d-byte cap (%d so far)",
                    overflow.total,
                    self.max_message_bytes,
                    self.cut_messages,
                )
            return None
        return SessionMessage(message)

    async def _write_stdin(
        self,
        fd: int,
        source: MemoryObjectReceiveStream[SessionMessage],
        reads: MemoryObjectSendStream[SessionMessage | Exception],
    ) -> None:
        async with source:
            try:
                async for item in source:
                    self._requests.sent(item.message)
                    data = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await _write(fd, data.encode("utf-8"))
            except (OSError, anyio.ClosedResourceError):  # the server's stdin is gone: the session sees the end
                await reads.aclose()

    async def _read_stderr(self, fd: int) -> None:
        while chunk := await _read(fd):
            self._stderr.append(chunk)
            self._stderr_size += len(chunk)
            while self._stderr_size - len(self._stderr[0]) >= STDERR_TAIL_BYTES:
                self._stderr_size -= len(self._stderr.popleft())


class _Pipes:
    """Three pipes: the child's ends are given to the server, ours are non-blocking."""

    def __init__(self) -> None:
        self.child_stdin, self.stdin = os.pipe()
        self.stdout, self.child_stdout = os.pipe()
        self.stderr, self.child_stderr = os.pipe()
        for fd in (self.stdin, self.stdout, self.stderr):
            os.set_blocking(fd, False)
        self._open = {self.child_stdin, self.stdin, self.stdout, self.child_stdout, self.stderr, self.child_stderr}

    def _close(self, fd: int) -> None:
        if fd in self._open:
            self._open.discard(fd)
            if fd in (self.stdin, self.stdout, self.stderr):  # wake a task waiting on it
                anyio.notify_closing(fd)
            os.close(fd)

    def close_child_ends(self) -> None:
        for fd in (self.child_stdin, self.child_stdout, self.child_stderr):
            self._close(fd)

    def close_stdin(self) -> None:
        self._close(self.stdin)

    def close_all(self) -> None:
        for fd in list(self._open):
            self._close(fd)


async def _read(fd: int) -> bytes:
    """Up to :data:`CHUNK` bytes; ``b""`` at the end (or when the pipe is closed under us). Each read yields to
    the loop: a server that keeps its pipe full (of blank lines, which make no message to await) would
    otherwise hold the loop, every other server, the API and the call's own timeout, for as long as it likes."""
    while True:
        try:
            chunk = os.read(fd, CHUNK)
            await anyio.lowlevel.checkpoint()
            return chunk
        except BlockingIOError:
            try:
                await anyio.wait_readable(fd)
            except (anyio.ClosedResourceError, OSError):
                return b""
        except OSError:
            return b""


async def _write(fd: int, data: bytes) -> None:
    """Raises: OSError when the server's end is closed."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            await anyio.wait_writable(fd)


async def _exited(process: anyio.abc.Process, timeout: float) -> bool:
    """Whether the process ended within ``timeout`` seconds (its return code, not ``wait``, which may block)."""
    with anyio.move_on_after(timeout):
        while process.returncode is None:
            await anyio.sleep(_POLL)
    return process.returncode is not None


def _signal_group(group: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, sig)
