"""Run real agent binaries against a fake model API, inside a loopback-only network namespace.

This file is a standalone script (standard library only). The test process starts it as
``unshare -n python driver.py JOBS.json``; here, in the new namespace, it brings ``lo`` up,
checks that ``/proc/net/dev`` lists nothing but ``lo`` (no route can leave the machine),
then runs every job concurrently: each gets its own fake API server on a loopback port
that records every request and answers with a minimal streaming reply, and one agent
process (Codex ``exec`` against a Responses API, Claude Code ``-p`` against a Messages
API, Gemini CLI ``-p`` against the Gemini API, OpenCode ``run`` and Copilot CLI ``-p`` against a Chat
Completions API) with a throwaway HOME and a minimal environment.
Gemini CLI first asks a router model (``:generateContent``) for JSON shaped by its
``responseJsonSchema`` (anything else and it retries), then streams the turn
(``:streamGenerateContent?alt=sse``). It prints one JSON object per job:
the requests the agent sent, its exit code and the tail of its stderr. A job may add
``args`` to the agent's command line, ``env`` to its environment, and ``setup`` commands (the
agent's own configuration commands, such as ``claude mcp add``) run first with the same
environment.

A Copilot CLI job with ``read`` answers its first turn with a ``view`` tool call of that file.
A Claude Code job with ``read`` runs two model turns: the first answer is a ``Read`` tool
call of that file, so the second request shows what Claude Code adds after a file read
(nested CLAUDE.md files, path-scoped rules). An OpenCode job with ``read`` answers its turn (the request
with ``tools``; its title request has none) with a ``read`` tool call of that file the same way.

OpenCode is given its provider in ``OPENCODE_CONFIG_CONTENT`` (``@ai-sdk/openai-compatible``, bundled
in its binary) with model and small model on it, and ``OPENCODE_DISABLE_*`` set so that it fetches
no model list, plugin, LSP server or update; its npm wrapper's binary is replaced by a postinstall we
do not run, so the job names the platform package's binary.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

RUN_TIMEOUT = 120.0

_RESPONSES_EVENTS: list[dict[str, Any]] = [
    {
        "type": "response.created",
        "response": {"id": "resp_1", "object": "response", "status": "in_progress", "output": []},
    },
    {
        "type": "response.output_item.done",
        "output_index": 0,
        "item": {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "ok", "annotations": []}],
        },
    },
    {
        "type": "response.completed",
        "response": {
            "id": "resp_1",
            "object": "response",
            "status": "completed",
            "output": [],
            "usage": {
                "input_tokens": 1,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 1,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 2,
            },
        },
    },
]

_MESSAGE: dict[str, Any] = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [],
    "stop_reason": None,
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}
_MESSAGES_EVENTS: list[dict[str, Any]] = [
    {"type": "message_start", "message": _MESSAGE},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}},
    {"type": "content_block_stop", "index": 0},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 1},
    },
    {"type": "message_stop"},
]


def _read_call(path: str) -> list[dict[str, Any]]:
    """A streamed answer asking for one ``Read`` of ``path``."""
    call = {"type": "tool_use", "id": "toolu_01", "name": "Read", "input": {}}
    return [
        {"type": "message_start", "message": _MESSAGE},
        {"type": "content_block_start", "index": 0, "content_block": call},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": json.dumps({"file_path": path})},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 1},
        },
        {"type": "message_stop"},
    ]


def _chat(content: str | None, tool_call: dict[str, Any] | None = None) -> dict[str, Any]:
    """One Chat Completions chunk: text, or one tool call (OpenCode's ``read``, Copilot CLI's ``view``)."""
    delta: dict[str, Any] = {"role": "assistant"}
    if content is not None:
        delta["content"] = content
    if tool_call is not None:
        delta["tool_calls"] = [{"index": 0, "id": "call_1", "type": "function", "function": tool_call}]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "capture-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
    }


def _chat_stream(content: str | None, tool_call: dict[str, Any] | None = None) -> bytes:
    reason = "tool_calls" if tool_call is not None else "stop"
    done = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "capture-model",
        "choices": [{"index": 0, "delta": {}, "finish_reason": reason}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    chunks = [_chat(content, tool_call), done]
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def _chat_answered(body: Any) -> bool:
    """Whether a Chat Completions request already carries a tool result (the second turn)."""
    messages = body.get("messages", []) if isinstance(body, dict) else []
    return any(isinstance(m, dict) and m.get("role") == "tool" for m in messages)


def _answered(body: Any) -> bool:
    """Whether a Messages request already carries a tool result (the second turn)."""
    messages = body.get("messages", []) if isinstance(body, dict) else []
    return any(
        isinstance(m.get("content"), list) and any(c.get("type") == "tool_result" for c in m["content"])
        for m in messages
    )


def _schema_value(schema: Any) -> Any:
    """A value of the JSON schema Gemini CLI's router asks for (its types are upper case: OBJECT, INTEGER)."""
    if not isinstance(schema, dict):
        return "ok"
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type") or ("object" if "properties" in schema else "string")).lower()
    if kind == "object":
        return {key: _schema_value(value) for key, value in (schema.get("properties") or {}).items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 50
    if kind == "boolean":
        return False
    return "ok"


def _gemini_reply(text: str) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
    }


def _sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


class _Recorder(BaseHTTPRequestHandler):
    server: _FakeApi

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _record(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        with self.server.lock:
            self.server.requests.append({"method": self.command, "path": self.path, "body": body})
        return body

    def do_GET(self) -> None:
        self._record()
        self._reply(404, b'{"error": "not found"}', "application/json")

    def do_POST(self) -> None:
        body = self._record()
        path = self.path.split("?", 1)[0]
        if path.endswith(":generateContent"):  # Gemini CLI's router: JSON by the schema it gives
            config = body.get("generationConfig", {}) if isinstance(body, dict) else {}
            text = json.dumps(_schema_value(config.get("responseJsonSchema") or config.get("responseSchema")))
            self._reply(200, json.dumps(_gemini_reply(text)).encode(), "application/json")
        elif path.endswith(":streamGenerateContent"):
            self._reply(200, f"data: {json.dumps(_gemini_reply('ok'))}\r\n\r\n".encode(), "text/event-stream")
        elif path.endswith("/chat/completions") and self.server.agent == "copilot":  # provider type openai
            read = self.server.read if not _chat_answered(body) else None
            call = None if read is None else {"name": "view", "arguments": json.dumps({"path": read})}
            self._reply(200, _chat_stream(None if call else "ok", call), "text/event-stream")
        elif path.endswith("/chat/completions"):  # OpenCode: its title request, then the turn (with tools)
            read = self.server.read
            call = None
            if read and isinstance(body, dict) and body.get("tools") and not _chat_answered(body):
                call = {"name": "read", "arguments": json.dumps({"filePath": read})}
            if isinstance(body, dict) and body.get("stream"):
                self._reply(200, _chat_stream(None if call else "ok", call), "text/event-stream")
            else:
                answer: dict[str, Any] = {"role": "assistant", "content": "ok"}
                reply = {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "created": 1,
                    "model": "capture-model",
                    "choices": [{"index": 0, "message": answer, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
                self._reply(200, json.dumps(reply).encode(), "application/json")
        elif path.endswith("/responses"):
            self._reply(200, _sse(_RESPONSES_EVENTS), "text/event-stream")
        elif path.endswith("/messages") and isinstance(body, dict) and body.get("stream"):
            read = self.server.read
            if read and body.get("tools") and not _answered(body):
                self._reply(200, _sse(_read_call(read)), "text/event-stream")
            else:
                self._reply(200, _sse(_MESSAGES_EVENTS), "text/event-stream")
        elif path.endswith("/messages"):
            message = {**_MESSAGE, "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn"}
            self._reply(200, json.dumps(message).encode(), "application/json")
        else:
            self._reply(404, b'{"error": "not found"}', "application/json")

    def _reply(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _FakeApi(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, read: str | None = None, agent: str = "") -> None:
        super().__init__(("127.0.0.1", 0), _Recorder)
        self.read = read  # the file the first answer asks the agent to read
        self.agent = agent  # who is asking: OpenCode and Copilot CLI both speak Chat Completions
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []


def loopback_only() -> list[str]:
    """Bring ``lo`` up and return the interfaces ``/proc/net/dev`` lists (must be ``lo`` alone)."""
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True, capture_output=True)
    with open("/proc/net/dev") as fh:
        lines = fh.read().splitlines()[2:]
    return sorted(line.split(":", 1)[0].strip() for line in lines if ":" in line)


def _command(job: dict[str, Any], port: int) -> tuple[list[str], dict[str, str]]:
    env = {
        "HOME": job["home"],
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
    }
    env.update(job.get("env", {}))
    if job["agent"] == "codex":
        provider = (
            f'model_providers.capture={{ name="capture", base_url="http://127.0.0.1:{port}/v1", '
            'wire_api="responses", env_key="CAPTURE_API_KEY", request_max_retries=0, stream_max_retries=0 }'
        )
        env["CAPTURE_API_KEY"] = "dummy"
        command = [job["binary"], "exec", "--skip-git-repo-check", "-c", 'model_provider="capture"', "-c", provider]
        return [*command, *job.get("args", ()), "hi"], env
    if job["agent"] == "opencode":
        chat_provider: dict[str, Any] = {
            "npm": "@ai-sdk/openai-compatible",
            "name": "capture",
            "options": {"baseURL": f"http://127.0.0.1:{port}/v1", "apiKey": "dummy"},
            "models": {"capture-model": {"name": "capture-model"}},
        }
        content = {
            "provider": {"capture": chat_provider},
            "model": "capture/capture-model",
            "small_model": "capture/capture-model",
            "autoupdate": False,
            "share": "disabled",
        }
        env.update(
            {
                "OPENCODE_CONFIG_CONTENT": json.dumps(content),
                "OPENCODE_DISABLE_MODELS_FETCH": "1",
                "OPENCODE_DISABLE_AUTOUPDATE": "1",
                "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
                "OPENCODE_DISABLE_SHARE": "1",
            }
        )
        return [job["binary"], "run", *job.get("args", ()), "hi"], env
    if job["agent"] == "copilot":
        env.update(
            {
                "COPILOT_OFFLINE": "true",
                "COPILOT_PROVIDER_BASE_URL": f"http://127.0.0.1:{port}/v1",
                "COPILOT_PROVIDER_TYPE": "openai",
                "COPILOT_PROVIDER_API_KEY": "dummy",
                "COPILOT_MODEL": "capture-model",
                "COPILOT_AUTO_UPDATE": "false",
            }
        )
        return [job["binary"], *job.get("args", ()), "-p", "hi"], env
    if job["agent"] == "gemini":
        env.update(
            {
                "GEMINI_API_KEY": "dummy",
                "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{port}",
                "GEMINI_CLI_TRUST_WORKSPACE": "true",
            }
        )
        _gemini_settings(job["home"])
        return [job["binary"], *job.get("args", ()), "-p", "hi"], env
    env.update(
        {
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
            "ANTHROPIC_API_KEY": "sk-ant-dummy",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
        }
    )
    return [job["binary"], *job.get("args", ()), "-p", "hi"], env


def _gemini_settings(home: str) -> None:
    """``~/.gemini/settings.json`` choosing the API key (a base URL alone makes it a gateway, which -p refuses);
    a workspace's own settings are kept, the auth added to them."""
    path = os.path.join(home, ".gemini", "settings.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    settings: dict[str, Any] = {}
    if os.path.exists(path):
        with open(path) as fh:
            settings = json.load(fh)
    settings.setdefault("security", {}).setdefault("auth", {})["selectedType"] = "gemini-api-key"
    with open(path, "w") as fh:
        json.dump(settings, fh)


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    server = _FakeApi(job.get("read"), job["agent"])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        command, env = _command(job, server.server_address[1])
        for setup in job.get("setup", ()):  # configuration commands of the agent itself (offline)
            subprocess.run(setup, cwd=job["cwd"], env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        try:
            done = subprocess.run(
                command,
                cwd=job["cwd"],
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=RUN_TIMEOUT,
            )
            code, stderr = done.returncode, done.stderr
        except subprocess.TimeoutExpired as exc:
            code, stderr = -1, (exc.stderr or b"") + b"\n(timed out)"
        with server.lock:
            requests = list(server.requests)
        return {
            "id": job["id"],
            "exit": code,
            "stderr": stderr.decode("utf-8", "replace")[-2000:],
            "requests": requests,
        }
    finally:
        server.shutdown()
        server.server_close()


def main() -> int:
    with open(sys.argv[1]) as fh:
        jobs: list[dict[str, Any]] = json.load(fh)
    interfaces = loopback_only()
    if interfaces != ["lo"]:
        print(json.dumps({"error": f"refusing to run agents: interfaces besides lo: {interfaces}"}))
        return 3
    for job in jobs:  # Copilot CLI unpacks its bundle into its package cache on a first start: once, before the runs
        if job["agent"] == "copilot":
            env = {"HOME": job["home"], "PATH": os.environ.get("PATH", "/usr/bin:/bin"), **job.get("env", {})}
            subprocess.run([job["binary"], "--version"], env=env, capture_output=True, timeout=RUN_TIMEOUT)
            break
    workers = int(os.environ.get("REALAGENTS_WORKERS", "6"))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(run_job, jobs))
    print(json.dumps({"interfaces": interfaces, "results": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
