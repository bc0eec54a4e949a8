"""Every test runs with its own HOME: nothing of the real machine's ~/.codex, ~/.claude or config leaks in."""

from __future__ import annotations

import compileall
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import containment
from tests.pg_cluster import TempCluster, find_binaries


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--screenshots",
        metavar="DIR",
        default=None,
        help="save a screenshot of each dashboard page the browser tests visit",
    )


def pytest_report_header() -> list[str]:
    return [f"sqlite {sqlite3.sqlite_version}"]


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for name in ("CODEX_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name in list(__import__("os").environ):
        if name.startswith(("AGENTCONTEXT_", "CODER_AGENT_EXP_")):
            monkeypatch.delenv(name)
    yield home


@pytest.fixture
def home(isolated_home: Path) -> Path:
    return isolated_home


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


NO_POSTGRES = "PostgreSQL is not installed here (no initdb/pg_ctl/postgres found; apt-get install postgresql)"


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[TempCluster]:
    """A PostgreSQL started from the installed binaries, once per test session (each xdist worker has its own);
    tests take a fresh database of it (``create_database``)."""
    if find_binaries() is None:
        pytest.skip(NO_POSTGRES)
    with TempCluster.start() as cluster:
        yield cluster


@pytest.fixture
def pg_database(pg_cluster: TempCluster) -> Iterator[str]:
    """The URL of a fresh, empty database of the worker's cluster, dropped after the test."""
    with pg_cluster.database() as url:
        yield url


@pytest.fixture(scope="session")
def pg_migrated_template(pg_cluster: TempCluster) -> str:
    """The name of a database of the worker's cluster at the newest revision, migrated once, to copy from."""
    from tests.migrated import migrate_once  # the control plane's modules, for the tests that need them only

    migrate_once(pg_cluster.create_database("migrated"))
    return "migrated"


@pytest.fixture
def pg_migrated_database(pg_cluster: TempCluster, pg_migrated_template: str) -> Iterator[str]:
    """The URL of a fresh database at the newest revision (a copy: migrating each one took 0.2-0.4 s), dropped
    after the test."""
    with pg_cluster.database(template=pg_migrated_template) as url:
        yield url


def pytest_configure(config: pytest.Config) -> None:
    containment.install()
    if not hasattr(config, "workerinput"):  # once, in the controller, before any worker starts
        _compile_sources()


def _compile_sources() -> None:
    """Writes the package's bytecode, so the hundreds of ``python -m agentcontext`` processes the suite starts load
    it instead of compiling every module again: with ``PYTHONDONTWRITEBYTECODE`` set (this machine's image sets
    it) no process writes it, and compiling cost each start about 0.2 s of CPU (tests/cli: 308 s of CPU, 267 s
    with it). Only modules changed since their last compile are compiled."""
    compileall.compile_dir(Path(__file__).parents[1] / "src", quiet=1)


@pytest.fixture(autouse=True)
def contained() -> Iterator[None]:
    """Fails a test during which anything in this process read inside an ``outside-the-roots`` folder."""
    containment.take()
    yield
    escaped = containment.take()
    assert not escaped, f"read outside the allowed roots: {sorted(set(escaped))}"
