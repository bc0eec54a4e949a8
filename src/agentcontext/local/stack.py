"""``agentcontext up``: the control plane and an agent for one work dir, started, watched and stopped as one.

1. The database is migrated and the local user, the work dir's workspace and its agent
   made or reused (``provision``), their tokens kept in the state file (``state``).
2. ``agentcontext server`` and ``agentcontext agent`` start as children
   (``supervisor``), their output in ``logs/`` in the data dir; secrets go through the
   environment, never the command line that ``ps`` shows.
3. Until SIGINT, SIGTERM or SIGHUP, the status is read from both APIs twice a second
   (``probe``) and shown (``live``). A child that ends on its own is reported with the end
   of its log, and the other one stopped: exit 1. A requested stop ends both: exit 0.

One ``up`` a work dir (``claim``): a lock in the data dir held by ``up``, so a second ``up`` of a
folder whose agent runs is refused, naming the first, instead of starting a second agent under
the same token (whose stop would mark the workspace offline under the first). The kernel lets
the lock go when ``up`` ends, however it ends; the note it leaves names its agent, so an
agent that outlives a killed ``up`` (still stopping) refuses the next one too. The lock is not
passed on to the agent: what the agent starts (the repository's MCP servers) would inherit it.

Ports: an address given with ``--listen`` / ``--agent-listen`` must be free, else a clear
error; without one the server takes 127.0.0.1:8765 when free, else any free port (said so),
and the agent any free loopback port. When the control plane of the same database still
runs and knows the user's token (``up`` in a second folder; for a SQLite file, the server
its lock names, ``control.sqlite_file``), no second server starts, ``--listen`` or not: the
agent pushes there, and a stop ends the agent only.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from types import FrameType

from rich.console import Console
from rich.live import Live

from agentcontext.errors import UnavailableError
from agentcontext.fs import lockfile
from agentcontext.local import live, state
from agentcontext.local.probe import Probe, accepts
from agentcontext.local.state import Binding
from agentcontext.local.supervisor import Child, Command, Supervisor, start_time
from agentcontext.terminal import shown
from agentcontext.web.hosts import listen_address, reached_at

DEFAULT_SERVER = "127.0.0.1:8765"
REFRESH = 0.5  # seconds between two readings of the status
_CLI = (sys.executable, "-m", "agentcontext")


@dataclass(frozen=True, slots=True)
class Address:
    host: str
    port: int

    @property
    def url(self) -> str:
        """Where to connect: a wildcard address is reached on loopback."""
        return reached_at(self.host, self.port)

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


@dataclass(frozen=True, slots=True)
class UpOptions:
    work_dir: Path
    db_url: str
    state_file: Path
    logs: Path
    listen: str | None = None
    agent_listen: str | None = None
    mcp_trust: str | None = None


def parse_address(value: str, option: str) -> Address:
    """Raises: ConfigError for anything but HOST:PORT."""
    return Address(*listen_address(value, option))


def is_free(address: Address) -> bool:
    family = socket.AF_INET6 if ":" in address.host else socket.AF_INET
    with socket.socket(family) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: TIME_WAIT is no obstacle
        try:
            sock.bind((address.host, address.port))
        except OSError:
            return False
    return True


def free_port(host: str) -> int:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def choose_address(given: str | None, default: str | None, option: str) -> tuple[Address, str]:
    """The address to listen on, and a note when it is not the default.

    Raises:
        UnavailableError: the address given is in use.
    """
    if given is not None:
        address = parse_address(given, option)
        if not is_free(address):
            raise UnavailableError(f"{address} is already in use: stop what listens there or pass another {option}")
        return address, ""
    if default is not None:
        address = parse_address(default, option)
        if is_free(address):
            return address, ""
        chosen = Address(address.host, free_port(address.host))
        return chosen, f"{address} is in use, so the control plane listens on {chosen} instead"
    return Address("127.0.0.1", free_port("127.0.0.1")), ""


class StopRequest:
    """Set by SIGINT, SIGTERM or SIGHUP; the handlers are ours only inside ``installed``."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.signal: str | None = None

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.signal = self.signal or signal.Signals(signum).name
        self.event.set()

    @contextlib.contextmanager
    def installed(self) -> Iterator[StopRequest]:
        signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        previous = {sig: signal.signal(sig, self._handle) for sig in signals}
        try:
            yield self
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def claim(work_dir: Path, folder: Path) -> lockfile.Held:
    """The lock that makes this ``up`` the one running for ``work_dir`` (a file in ``folder``, the data dir's
    ``run``), noting this process; ``run`` notes the agent's and the dashboard's URLs once it knows them.

    Raises:
        UnavailableError: an ``up`` of ``work_dir`` (or its agent) still runs; its lock file cannot be made.
    """
    path = folder / f"up-{hashlib.sha256(os.fsencode(work_dir)).hexdigest()[:32]}.lock"
    try:
        held = lockfile.hold(path)
    except OSError as exc:
        raise UnavailableError(f"cannot make the lock file {path}: {exc.strerror or exc}") from None
    if held is None:
        raise UnavailableError(_running(work_dir, lockfile.holder(path)))
    earlier = held.left()  # the last ``up``'s note: is its agent still running (``up`` was killed)?
    agent_pid, started = earlier.get("agent_pid"), earlier.get("agent_started")
    if isinstance(agent_pid, int) and isinstance(started, str) and start_time(agent_pid) == started:
        held.release()
        raise UnavailableError(
            f"the agent an earlier `up` of {work_dir} started (pid {agent_pid}) still runs: stop it first"
            f" (kill {agent_pid}), or wait until it has stopped"
        )
    held.note(work_dir=str(work_dir))
    return held


def _running(work_dir: Path, note: dict[str, object]) -> str:
    """The refusal of a second ``up`` of ``work_dir``: who runs it (what the first noted) and how to stop it."""
    pid, agent, dashboard = note.get("pid"), note.get("agent"), note.get("dashboard")
    known = [f"pid {pid}"] if isinstance(pid, int) else []
    if isinstance(agent, str) and isinstance(dashboard, str):
        known += [f"agent {agent}", f"dashboard {dashboard}"]
    by = f" ({'; '.join(known)})" if known else ""
    how = f"Ctrl-C where it runs, or kill {pid}" if isinstance(pid, int) else "Ctrl-C where it runs"
    return f"an `up` of {work_dir} is already running{by}: use that one, or stop it first ({how})"


def prepare(options: UpOptions) -> tuple[state.LocalState, Binding]:
    """Migrate the database, make or reuse the user, workspace and agent; the state and the work dir's binding."""
    from agentcontext.control import migrate
    from agentcontext.control.db import Database
    from agentcontext.local.provision import provision

    db = Database(options.db_url)
    try:
        migrate.upgrade(db)
        return provision(db, state.load(options.state_file), options.work_dir)
    finally:
        db.dispose()


# agentcontext's credentials, by the child that needs each: no child gets another's (the agent's environment
# reaches the repository's MCP servers' ${VAR}s only through what the user approved, but it keeps nothing it
# does not use either)
_CREDENTIALS = frozenset({
    "AGENTCONTEXT_TOKEN", "AGENTCONTEXT_MCP_TOKEN", "AGENTCONTEXT_AGENT_TOKEN",
    "AGENTCONTEXT_DB", "AGENTCONTEXT_SERVER_KEY", "AGENTCONTEXT_SERVER_KEY_FILE",
})  # fmt: skip
_NEEDS = {
    "server": frozenset({"AGENTCONTEXT_DB", "AGENTCONTEXT_SERVER_KEY", "AGENTCONTEXT_SERVER_KEY_FILE"}),
    "agent": frozenset({"AGENTCONTEXT_AGENT_TOKEN"}),
}


def child_environment(child: str, own: dict[str, str]) -> dict[str, str]:
    """Our environment for ``child``: the user's, without the credentials another child needs, plus its own."""
    dropped = _CREDENTIALS - _NEEDS[child]
    return {key: value for key, value in os.environ.items() if key not in dropped} | own


def server_command(options: UpOptions, server: Address) -> Command:
    env = child_environment("server", {"AGENTCONTEXT_DB": options.db_url})
    return Command(
        "server", [*_CLI, "server", "--listen", str(server)], env, options.logs / f"server-{server.port}.log"
    )


def agent_command(options: UpOptions, agent: Address, server_url: str, binding: Binding) -> Command:
    argv = [*_CLI, "agent", "--work-dir", str(options.work_dir), "--listen", str(agent), "--control-plane", server_url]
    if options.mcp_trust:
        argv += ["--mcp-trust", options.mcp_trust]
    env = child_environment("agent", {"AGENTCONTEXT_AGENT_TOKEN": binding.token})
    return Command("agent", argv, env, options.logs / f"agent-{binding.workspace}.log")


def run(options: UpOptions, out: Console, err: Console, claimed: lockfile.Held | None = None) -> int:
    """Run the stack until asked to stop (0) or until a child ends on its own (1); ``claimed`` is the work dir's
    lock (``claim``), noted with where the agent and the dashboard are."""
    with StopRequest().installed() as stop, _starting(options, err) as started:
        with _progress(err, "Preparing the database …"):
            local, binding = prepare(options)
        assert local.user_token is not None
        server, server_url = _server(local, options, err)
        agent, _ = choose_address(options.agent_listen, None, "--agent-listen")
        noted = {"work_dir": str(options.work_dir), "agent": agent.url, "dashboard": f"{server_url}/"}
        if claimed is not None:
            claimed.note(**noted)
        state.save(options.state_file, replace(local, server_url=server_url, database=options.db_url))
        login = f"{server_url}/login#token={local.user_token}"
        view = View(out, f"{server_url}/", login, local.user or "", binding, str(options.work_dir))
        probe = Probe(server_url, local.user_token, agent.url, binding.token)
        supervisor = Supervisor()
        try:
            children = (
                server_command(options, server) if server is not None else None,
                agent_command(options, agent, server_url, binding),
            )
            dead = _supervise(supervisor, children, probe, stop, view, err, _noting(claimed, noted), started)
        finally:
            probe.close()
            if supervisor.children:
                err.print("Stopping …")
            supervisor.stop()
        err.print("Stopped after a failure." if dead is not None else "Stopped.")
        return 0 if dead is None else 1


def _server(local: state.LocalState, options: UpOptions, err: Console) -> tuple[Address | None, str]:
    """Where to start the control plane and its URL; no address when the database's control plane runs.

    Raises:
        UnavailableError: the address given with --listen is in use.
    """
    running = _running_server(local, options.db_url)
    if running is not None:
        err.print(f"Using the control plane already running at {running}: Ctrl-C stops this agent only.")
        if options.listen is not None and running != parse_address(options.listen, "--listen").url:
            err.print(f"[yellow]It serves this database, so --listen {options.listen} is not used.[/]")
        return None, running
    server, note = choose_address(options.listen, None if options.listen else DEFAULT_SERVER, "--listen")
    if note:
        err.print(f"[yellow]{note}[/]")
    return server, server.url


def _running_server(local: state.LocalState, db_url: str) -> str | None:
    """The URL of the control plane that serves ``db_url`` and knows the user's token, if one runs: for a SQLite
    file the one its lock names (whoever started it, from whichever folder), else the one an earlier ``up``
    started on the same database URL."""
    from agentcontext.control.db import sqlite_path
    from agentcontext.control.sqlite_file import serving_lock

    found = []
    if (sqlite_file := sqlite_path(db_url)) is not None:  # its lock says who serves it now, if anyone
        found.append(lockfile.holder(serving_lock(sqlite_file)).get("url"))
    elif local.database == db_url:
        found.append(local.server_url)
    token = local.user_token
    return next((url for url in found if isinstance(url, str) and token and accepts(url, token)), None)


@dataclass(frozen=True, slots=True)
class View:
    out: Console
    dashboard: str
    login: str
    user: str
    binding: Binding
    work_dir: str


def _supervise(
    supervisor: Supervisor,
    children: tuple[Command | None, Command],
    probe: Probe,
    stop: StopRequest,
    view: View,
    err: Console,
    agent_started: Callable[[Child], None],
    server_up: Callable[[], None] = lambda: None,
) -> Child | None:
    """The server first (unless one runs), the agent once it answers (``agent_started`` told), then the status
    until a stop or a child's end (that child)."""
    server, agent = children
    if stop.event.is_set():  # a signal while the database was being prepared
        return None
    if server is not None:
        supervisor.start(server)
    with _progress(err, "Starting the control plane …" if server else "Waiting for the control plane …"):
        dead = _wait_server(supervisor, probe, stop)
    server_up()  # up (or gone): another ``up`` of the same database may now look for it
    if dead is None and not stop.event.is_set():
        agent_started(supervisor.start(agent))
        _announce(view)
        dead = _watch(supervisor, probe, stop, view)
    if dead is not None:
        _report(err, dead)
    return dead


STARTING_WAIT = 60.0  # seconds an ``up`` waits for another one starting a control plane on the same database


@contextlib.contextmanager
def _starting(options: UpOptions, err: Console) -> Iterator[Callable[[], None]]:
    """Hold the database's start lock from looking for a running control plane until ours answers (the callable
    yielded lets it go then): two ``up``s started together would otherwise both find none and start one each,
    and the second server, refused the database the first serves, would end its ``up``; this way the second
    waits and joins the first."""
    key = hashlib.sha256(options.db_url.encode()).hexdigest()[:32]
    path = options.state_file.parent / "run" / f"start-{key}.lock"
    deadline = time.monotonic() + STARTING_WAIT
    held = lockfile.hold(path)
    if held is None:
        err.print("Waiting for another `up` starting a control plane on this database …")
    while held is None and time.monotonic() < deadline:
        time.sleep(0.1)
        held = lockfile.hold(path)
    try:
        yield held.release if held is not None else lambda: None
    finally:
        if held is not None:
            held.release()


def _noting(claimed: lockfile.Held | None, noted: dict[str, str]) -> Callable[[Child], None]:
    """Notes the agent's pid and start time in the work dir's lock: an agent that outlives a killed ``up`` (still
    stopping, or where nothing stops it) refuses the next ``up`` of the folder too (``claim``)."""

    def note(child: Child) -> None:
        if claimed is not None:
            pid = child.process.pid
            claimed.note(**noted, agent_pid=pid, agent_started=start_time(pid))

    return note


@contextlib.contextmanager
def _progress(err: Console, message: str) -> Iterator[None]:
    """A spinner on a terminal (its thread ends with the block, before any child starts), else one line."""
    if not err.is_terminal:
        err.print(message)
        yield
        return
    with err.status(message):
        yield


def _wait_server(supervisor: Supervisor, probe: Probe, stop: StopRequest) -> Child | None:
    while not stop.event.is_set():
        dead = supervisor.exited()
        if dead is not None:
            return dead
        if probe.server_up():
            return None
        stop.event.wait(0.05)
    return None


def _announce(view: View) -> None:
    view.out.print(
        f"Dashboard: {shown(view.dashboard)}  (workspace [bold]{shown(view.binding.workspace)}[/],"
        f" user [bold]{shown(view.user)}[/])"
    )
    view.out.print("Log in:", view.login, soft_wrap=True, highlight=False)


def _watch(supervisor: Supervisor, probe: Probe, stop: StopRequest, view: View) -> Child | None:
    """Show the status until a stop is requested (None) or a child ends on its own (that child)."""
    live_view = Live(console=view.out, auto_refresh=False) if view.out.is_terminal else None
    last = ""
    with live_view or contextlib.nullcontext():
        while not stop.event.is_set():
            dead = supervisor.exited()
            if dead is not None:
                return dead
            status = probe.read(view.binding.workspace, view.binding.agent)
            if live_view is not None:
                live_view.update(live.panel(status, view.dashboard, view.work_dir), refresh=True)
            elif (line := live.plain(status)) != last:
                last = line
                view.out.print(line, soft_wrap=True, markup=False, highlight=False)
            stop.event.wait(REFRESH)
    return None


def _report(err: Console, child: Child) -> None:
    err.print(f"[red]The {child.name} exited with status {child.process.returncode}.[/] The end of its log:")
    err.print(child.log_tail(), markup=False, highlight=False, soft_wrap=True)
