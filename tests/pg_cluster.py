"""A throwaway PostgreSQL cluster started from the installed binaries, for tests and benchmarks.

    with TempCluster.start() as cluster:        # None-safe: see ``find_binaries``
        url = cluster.create_database("t1")     # postgresql://postgres@127.0.0.1:PORT/t1

PostgreSQL refuses to run as root, so under root the cluster belongs to the ``postgres``
user (Debian's package creates it) or ``nobody``, and its commands run as that user.
Durability is traded for speed (``fsync=off``): the data dies with the cluster anyway.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from agentcontext.errors import ConfigError


def find_binaries() -> Path | None:
    """The bin dir holding ``initdb``, ``pg_ctl`` and ``postgres``: ``$PG_BIN``, the PATH, or Debian's newest."""
    explicit = os.environ.get("PG_BIN")
    candidates = [Path(explicit)] if explicit else []
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(os.path.realpath(on_path)).parent)
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name or 0))
    candidates += [Path(p) for p in reversed(versions)]
    for directory in candidates:
        if all((directory / name).exists() for name in ("initdb", "pg_ctl", "postgres")):
            return directory
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _owner() -> pwd.struct_passwd | None:
    """Who runs the cluster: us, unless we are root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    raise ConfigError("running as root without a 'postgres' or 'nobody' user: PostgreSQL cannot be started")


@dataclass
class TempCluster:
    bin_dir: Path
    root: Path
    port: int
    owner: pwd.struct_passwd | None = None
    _counter: int = field(default=0, repr=False)

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def admin_url(self) -> str:
        return self.url("postgres")

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def socket_url(self, database: str) -> str:
        """``database`` reached over the cluster's Unix socket (in ``root``) rather than loopback TCP."""
        return f"postgresql://postgres@/{database}?host={self.root}&port={self.port}"

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        owner = self.owner
        return subprocess.run(
            [str(self.bin_dir / args[0]), *args[1:]],
            capture_output=True,
            text=True,
            check=False,
            cwd=self.root,
            user=owner.pw_uid if owner else None,
            group=owner.pw_gid if owner else None,
            extra_groups=[] if owner else None,
        )

    @classmethod
    @contextlib.contextmanager
    def start(cls, bin_dir: Path | None = None) -> Iterator[TempCluster]:
        """Raises: ConfigError (no binaries, or the cluster would not start, with its log)."""
        found = bin_dir or find_binaries()
        if found is None:
            raise ConfigError("no PostgreSQL binaries found (install Debian's postgresql, or set PG_BIN)")
        owner = _owner()
        root = Path(tempfile.mkdtemp(prefix="agentcontext-pg-"))
        if owner is not None:
            os.chown(root, owner.pw_uid, owner.pw_gid)
        cluster = cls(found, root, _free_port(), owner)
        try:
            cluster._init_and_start()
            yield cluster
        finally:
            cluster._run("pg_ctl", "-D", str(cluster.data), "-m", "immediate", "stop")
            shutil.rmtree(root, ignore_errors=True)

    def _init_and_start(self) -> None:
        init = self._run(
            "initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--no-locale"
        )
        if init.returncode != 0:
            raise ConfigError(f"initdb failed: {init.stderr.strip() or init.stdout.strip()}")
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
            " -c synchronous_commit=off -c full_page_writes=off -c max_connections=300"
        )
        log = self.root / "postgres.log"
        started = self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(log), "-w", "-t", "60", "start")
        if started.returncode != 0:
            text = log.read_text(errors="replace")[-2000:] if log.exists() else started.stderr
            raise ConfigError(f"PostgreSQL did not start: {text.strip()}")

    def create_database(self, name: str | None = None, *, template: str | None = None) -> str:
        """A new database, empty or a copy of the database named ``template`` (which nobody may be connected to);
        returns its URL."""
        if name is None:
            self._counter += 1
            name = f"t{os.getpid()}_{self._counter}"
        copied = f' TEMPLATE "{template}"' if template else ""
        with psycopg.connect(self.admin_url, autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"{copied}')  # our own generated names, never user input
        return self.url(name)

    @contextlib.contextmanager
    def database(self, *, template: str | None = None) -> Iterator[str]:
        """A new database for the block (its URL), empty or a copy of ``template``, dropped after it with its
        connections cut: a few hundred test databases of 11 MB each would otherwise fill the disk and make the
        cluster's removal slow."""
        url = self.create_database(template=template)
        try:
            yield url
        finally:
            name = url.rsplit("/", 1)[1]
            with psycopg.connect(self.admin_url, autocommit=True) as connection:
                connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # our own generated name

    def psql_ready(self) -> bool:
        return self._run("pg_isready", "-h", "127.0.0.1", "-p", str(self.port)).returncode == 0


@contextlib.contextmanager
def bench_database(name: str = "bench") -> Iterator[tuple[TempCluster, str]]:
    """A throwaway cluster and the URL of a database of it, for a benchmark; where PostgreSQL is not installed,
    the benchmark ends with one line saying so."""
    if find_binaries() is None:
        raise SystemExit("no PostgreSQL binaries (install Debian's postgresql, or set PG_BIN)")
    with TempCluster.start() as cluster:
        yield cluster, cluster.create_database(name)
