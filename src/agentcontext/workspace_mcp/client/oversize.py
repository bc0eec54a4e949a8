"""Messages from an upstream MCP server larger than a cap: cut at the reader, never buffered whole.

The readers (:mod:`agentcontext.workspace_mcp.client.stdio_transport` for a child's stdout,
:mod:`agentcontext.workspace_mcp.client.http_cap` for HTTP bodies and server-sent events) keep at most
:func:`message_cap` bytes of one message. Past that they keep only its first bytes (the
head), its last :data:`TAIL_BYTES` (the tail, where some servers write the ``id``) and a
count, and throw the rest away as it arrives. When the message ends it is replaced:

* the answer to a ``tools/call``: a result holding the text found in the head (cut to the
  output budget) and the visible marker ``[output truncated: ...]``;
* the answer to anything else: a JSON-RPC error saying the answer was too large;
* a message that answers nothing we asked (a notification, a request from the server, an
  answer whose id cannot be found): dropped; the caller is told through ``None``.

The cap is the tool output limit (``mcp.max_output_bytes``) plus 64 KiB for the JSON
around it, so a result that fits the output limit is never cut here.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from dataclasses import dataclass, field

import mcp.types as types

TAIL_BYTES = 512
ENVELOPE_BYTES = 64 * 1024
MAX_TRACKED = 1024  # outstanding requests remembered per connection
_MARKER_BYTES = 200
_ID = rb'("(?:[^"\\]|\\.){0,256}"|-?\d{1,20})'
_HEAD_ID = re.compile(rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*' + _ID)
_TAIL_ID = re.compile(rb'"id"\s*:\s*' + _ID + rb'\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$')
_ANSWER = re.compile(
    rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?(?:"id"\s*:\s*' + _ID + rb'\s*,\s*)?"(?:result|error)"\s*:'
)
_TEXT_KEY = re.compile(r'"text"\s*:\s*"')
_ERROR_FLAG = re.compile(rb'"isError"\s*:\s*true')


def message_cap(max_output_bytes: int) -> int:
    """The most bytes one upstream message may have before the reader cuts it."""
    return max_output_bytes + ENVELOPE_BYTES


@dataclass
class Overflow:
    """What is kept of a message past the cap: its head, its tail and its size."""

    head: bytes
    total: int = 0
    tail: bytearray = field(default_factory=bytearray)

    def __post_init__(self) -> None:
        self.total = max(self.total, len(self.head))
        self.tail = bytearray(self.head[-TAIL_BYTES:])

    def add(self, data: bytes) -> None:
        self.total += len(data)
        self.tail += data[-TAIL_BYTES:]
        del self.tail[:-TAIL_BYTES]


class Requests:
    """The requests sent on one connection and not yet answered, by id: their method."""

    def __init__(self) -> None:
        self._methods: OrderedDict[types.RequestId, str] = OrderedDict()

    def sent(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCRequest):
            self._methods[message.id] = message.method
            while len(self._methods) > MAX_TRACKED:
                self._methods.popitem(last=False)

    def answered(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id is not None:
            self._methods.pop(message.id, None)

    def take(self, request_id: types.RequestId | None) -> tuple[types.RequestId, str] | None:
        """The request an answer is for: by its id, else the only one outstanding."""
        if request_id is not None and request_id in self._methods:
            return request_id, self._methods.pop(request_id)
        if request_id is None and len(self._methods) == 1:
            return self._methods.popitem()
        return None


def _request_id(overflow: Overflow) -> types.RequestId | None:
    match = _HEAD_ID.match(overflow.head) or _TAIL_ID.search(bytes(overflow.tail))
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if isinstance(value, str | int) else None


def partial_text(head: bytes, budget: int) -> str:
    """The first ``text`` string in a cut JSON message, decoded, within ``budget`` bytes."""
    decoded = head.decode("utf-8", errors="ignore")
    match = _TEXT_KEY.search(decoded)
    if match is None:
        return ""
    fragment = _whole_escapes(_string_body(decoded, match.end()))
    try:
        text = str(json.loads(f'"{fragment}"'))
    except ValueError:
        return ""
    if text and "\ud800" <= text[-1] <= "\udbff":  # half a surrogate pair
        text = text[:-1]
    return text.encode("utf-8", errors="replace")[:budget].decode("utf-8", errors="ignore")


def _backslashes_before(text: str, at: int, start: int = 0) -> int:
    before = at - 1
    while before >= start and text[before] == "\\":
        before -= 1
    return at - 1 - before


def _whole_escapes(fragment: str) -> str:
    """``fragment`` without an escape the cut split (a lone trailing backslash, a short ``\\u``)."""
    partial = re.search(r"\\u[0-9a-fA-F]{0,3}$", fragment)
    if partial is not None and _backslashes_before(fragment, partial.start()) % 2 == 0:
        fragment = fragment[: partial.start()]
    if _backslashes_before(fragment, len(fragment)) % 2:
        fragment = fragment[:-1]
    return fragment


def _string_body(text: str, start: int) -> str:
    """The JSON string starting at ``start`` up to its closing quote (or the end), escapes left as they are.

    A scan with ``str.find`` rather than a regular expression: a repeated group over a
    megabyte of text costs the regex engine memory per character.
    """
    at = start
    while (quote := text.find('"', at)) >= 0:
        if _backslashes_before(text, quote, start) % 2 == 0:  # not escaped
            return text[start:quote]
        at = quote + 1
    return text[start:]


def replacement(overflow: Overflow, cap: int, requests: Requests, output_budget: int) -> types.JSONRPCMessage | None:
    """What stands in for a message cut at ``cap`` bytes (None: it answers nothing we asked)."""
    if not _ANSWER.match(overflow.head):
        return None  # not an answer (a request or notification from the server): dropped
    request = requests.take(_request_id(overflow))
    if request is None:
        return None
    request_id, method = request
    dropped = overflow.total
    if method == "tools/call":
        text = partial_text(overflow.head, max(0, output_budget - _MARKER_BYTES))
        marker = (
            f"[output truncated: the server's answer of {dropped} bytes is over the {cap}-byte message limit;"
            " cut as it was read]"
        )
        result = {
            "content": [{"type": "text", "text": f"{text}\n{marker}" if text else marker}],
            "isError": bool(_ERROR_FLAG.search(overflow.head)),
        }
        return types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)
    message = f"the server's answer to {method} ({dropped} bytes) is over the {cap}-byte message limit"
    error = types.ErrorData(code=types.INTERNAL_ERROR, message=message)
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
