"""Running the workspace agent: the context manager, the watcher, the MCP servers, the API, the pusher.

Readiness: with ``--startup CMD`` the agent is ready when the command ends (whatever its
exit status); with ``--wait-ready`` when ``POST /api/v0/ready`` arrives; otherwise at once.
SIGINT and SIGTERM stop the HTTP server, close every MCP session (killing each stdio
server's whole process group) and exit 0. The API always has a token (the command makes one
when none is given) and runs behind the request guard, with the edge's connection limits.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import platform
import secrets
import signal
import socket
import sys
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio
import anyio.abc
import uvicorn

from agentcontext.agent.api import create_app
from agentcontext.agent.context import ContextAgent
from agentcontext.agent.discovered import contained
from agentcontext.agent.push import Pusher
from agentcontext.agent.watcher import Watcher
from agentcontext.errors import ConfigError
from agentcontext.settings.config import Config
from agentcontext.web.guard import Edge
from agentcontext.web.hosts import is_loopback
from agentcontext.web.serving import GuardedConfig, bind
from agentcontext.wire.sync import AgentInfo, agent_url_problem
from agentcontext.workspace_mcp.trust import TrustStore

log = logging.getLogger("agentcontext.agent")
DEFAULT_LISTEN = "127.0.0.1:8766"


@dataclass(frozen=True, slots=True)
class AgentOptions:
    host: str = "127.0.0.1"
    port: int = 8766
    token: str | None = None
    startup: str | None = None
    wait_ready: bool = False
    control_plane: str | None = None
    advertise_url: str | None = None
    heartbeat: float = 15.0
    edge: Edge | None = None  # the names served and the limits (default: loopback only)
    listening: socket.socket | None = None  # already bound by the caller (``agentcontext agent``); else bound here


class _Server(uvicorn.Server):
    """uvicorn without its own signal handling: the agent stops it, then cleans up, then exits 0."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def check_options(options: AgentOptions) -> None:
    """Raises: ConfigError for a non-loopback listen address without a token given, a push without one, or an
    advertised URL that is more than a scheme, a host and a port (the control plane refuses it)."""
    if options.token is None and not is_loopback(options.host):
        raise ConfigError(f"refusing to listen on {options.host} without --token: only loopback may go without one")
    if options.control_plane and not options.token:
        raise ConfigError("--control-plane needs the agent's token (--token or AGENTCONTEXT_AGENT_TOKEN)")
    if options.control_plane and not _is_base_url(options.control_plane):
        raise ConfigError(
            f"--control-plane wants the control plane's http:// or https:// URL, not {options.control_plane!r}"
        )
    problem = agent_url_problem(options.advertise_url) if options.advertise_url is not None else None
    if problem:
        raise ConfigError(f"--advertise-url {problem}: {options.advertise_url!r}")


async def serve(work_dir: str, config: Config, options: AgentOptions, environ: Mapping[str, str]) -> ContextAgent:
    """Run until SIGINT or SIGTERM; returns the agent after everything is closed."""
    check_options(options)
    if not options.token:
        raise ConfigError("the agent's API needs a token")
    # before anything starts: a taken port is one line, exit 2
    listening = options.listening or bind(options.host, options.port)
    agent = ContextAgent(work_dir, config, environ=environ, trust=TrustStore.default(environ))
    # the control plane keeps only a hash of our token, so it reaches our API with a per-run secret
    peer_token = secrets.token_urlsafe(32) if options.control_plane else None
    app = create_app(agent, token=options.token, peer_token=peer_token, edge=options.edge)
    served = GuardedConfig(
        app,
        options.edge or Edge(),
        host=options.host,
        port=options.port,
        log_level="warning",
        lifespan="off",
        access_log=False,
    )
    server = _Server(served)
    watcher = Watcher(
        agent.trigger,
        debounce_ms=config.agent.debounce_ms,
        names=agent.watched_names(),
        read=agent.read_files,
        on_error=lambda error: _watch_error(agent, error),
        on_paths=agent.forget,
        label="snapshot",
    )
    async with agent.mcp, anyio.create_task_group() as group:
        group.start_soon(agent.run)
        group.start_soon(watcher.run)
        group.start_soon(_follow_watch_dirs, agent, watcher)
        group.start_soon(agent.follow_trust)
        group.start_soon(_stop_on_signal, server)
        if options.startup:
            group.start_soon(_startup, agent, options.startup)
        elif not options.wait_ready:
            agent.set_ready()
        pusher = _pusher(options, config, peer_token, listening.getsockname()[1])  # port 0: the one given
        if pusher is not None:  # with no control plane, nobody is told of a discovered file's change
            group.start_soon(pusher.run, agent)
            group.start_soon(_watch_discovered, agent)
        await server.serve(sockets=[listening])
        group.cancel_scope.cancel()
    return agent


def _is_base_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
        return parts.scheme in ("http", "https") and bool(parts.hostname) and parts.port != 0
    except ValueError:  # a port that is no number, or past 65535
        return False


def _pusher(options: AgentOptions, config: Config, peer_token: str | None, port: int) -> Pusher | None:
    """What pushes each snapshot to the control plane, telling it where and how to reach us (``port``: the one
    listened on); None: no control plane."""
    if not (options.control_plane and options.token):
        return None
    info = AgentInfo(
        url=options.advertise_url or advertised_url(options.host, port),
        api_token=peer_token,
        run_id=uuid.uuid4().hex,
        os=platform.system().lower(),
        home=config.home,
    )
    heartbeat, home_files = options.heartbeat, config.agent.push_home_files
    return Pusher(options.control_plane, options.token, info=info, heartbeat=heartbeat, home_files=home_files)


def advertised_url(host: str, port: int) -> str:
    """Where the control plane can reach the API: the listen address, or this host's name for a wildcard."""
    if host in ("0.0.0.0", "::", ""):
        host = socket.getfqdn()
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _watch_error(agent: ContextAgent, error: str | None) -> None:
    agent.watch_error = error
    agent.trigger()


async def _follow_watch_dirs(agent: ContextAgent, watcher: Watcher) -> None:
    """After each published snapshot, watch exactly the directories it depends on."""
    with agent.subscription() as events:
        while True:
            watcher.update(agent.watch_dirs())
            await events.receive()


async def _watch_discovered(agent: ContextAgent) -> None:
    """Watch the folders the on-demand answers depended on, those inside the work dir or a source only."""
    watch = agent.discovered

    def began(folders: set[str]) -> None:
        agent.forget(folders)  # what was remembered of them may have changed before their watch began
        watch.began()

    watcher = Watcher(
        watch.changed,
        debounce_ms=agent.config.agent.debounce_ms,
        relevant=watch.relevant,
        on_error=watch.broken,
        on_paths=agent.forget,
        on_began=began,
        label="discovered files",
    )
    async with anyio.create_task_group() as group:
        group.start_soon(watcher.run)
        while True:
            folders, bases = watch.folders(), agent.discovered_bases()
            watcher.update(await anyio.to_thread.run_sync(contained, folders, bases))
            await watch.learned()


async def _stop_on_signal(server: uvicorn.Server) -> None:
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            server.should_exit = True
            return


async def _startup(agent: ContextAgent, command: str) -> None:
    """Run the startup command in the work dir; the workspace is ready when it ends.

    It runs in its own process group: stopping the agent while it runs stops everything
    it started (killing the shell alone would leave its children running).
    """
    try:
        process = await anyio.open_process(
            ["/bin/sh", "-c", command], cwd=agent.work_dir, stdout=sys.stderr, stderr=sys.stderr, start_new_session=True
        )
    except OSError as exc:
        log.error("startup command could not run: %s", exc)
    else:
        try:
            log.info("startup command exited with %s", await process.wait())
        except BaseException:
            with anyio.CancelScope(shield=True):
                await _stop_group(process)
            raise
    agent.set_ready()


async def _stop_group(process: anyio.abc.Process) -> None:
    """SIGTERM the process's group, then SIGKILL whatever is left of it after a grace period."""
    for sig, grace in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 2.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        with anyio.move_on_after(grace):
            await process.wait()
            if sig is signal.SIGTERM:  # the leader is gone; its group may not be
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
            return


def run(work_dir: str, config: Config, options: AgentOptions, environ: Mapping[str, str]) -> None:
    # uvloop (from uvicorn[standard]) trims ~0.3 ms off every proxied call; it is absent on Windows.
    use_uvloop = importlib.util.find_spec("uvloop") is not None
    anyio.run(serve, work_dir, config, options, environ, backend_options={"use_uvloop": use_uvloop})
