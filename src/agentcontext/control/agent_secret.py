"""The secret the control plane calls an agent with, kept sealed: a copy of the database alone calls nobody.

Each run of a workspace agent makes up a secret its API accepts and sends it with every push
and heartbeat. The control plane needs it back (to read skill files, plans, and proxy MCP
calls), so it cannot keep only a hash: it seals it with AES-GCM under the *server key*, bound
to the agent's id, and stores that. The server key lives outside the database: the
``AGENTCONTEXT_SERVER_KEY`` environment variable, else the file ``--key-file`` or
``AGENTCONTEXT_SERVER_KEY_FILE`` names, else ``control-plane.key`` in the data dir, created
0600 on first start. Replicas sharing one PostgreSQL must share the key too (the variable
or the file); one that does not cannot open what another sealed, and says so.

A sealed secret is ``v1.`` and the URL-safe base64 of a 12-byte nonce and the ciphertext.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from agentcontext.errors import ConfigError, UnavailableError
from agentcontext.workspace_mcp.trust import data_dir

KEY_ENV = "AGENTCONTEXT_SERVER_KEY"
KEY_FILE_ENV = "AGENTCONTEXT_SERVER_KEY_FILE"
KEY_FILE_NAME = "control-plane.key"
MIN_KEY_CHARS = 32
_PREFIX = "v1."
_CONTEXT = b"agentcontext agent secret v1\x00"


class ForeignSeal(UnavailableError):
    """The agent's secret was sealed under another server key (a replica configured with a different one)."""


class SecretBox:
    """Seals and opens agents' secrets under one server key."""

    def __init__(self, key_material: str) -> None:
        if len(key_material) < MIN_KEY_CHARS:
            raise ConfigError(f"the server key must be at least {MIN_KEY_CHARS} characters of random text")
        self._aead = AESGCM(hashlib.sha256(_CONTEXT + key_material.encode("utf-8")).digest())

    @classmethod
    def ephemeral(cls) -> SecretBox:
        """A box with a key of its own, for one process (tests, in-process servers)."""
        return cls(secrets.token_urlsafe(32))

    def seal(self, agent_id: str, secret: str) -> str:
        nonce = os.urandom(12)
        sealed = self._aead.encrypt(nonce, secret.encode("utf-8"), agent_id.encode("utf-8"))
        return _PREFIX + base64.urlsafe_b64encode(nonce + sealed).decode("ascii")

    def open(self, agent_id: str, sealed: str) -> str:
        """Raises: ForeignSeal (sealed under another key, for another agent, or damaged)."""
        try:
            raw = base64.urlsafe_b64decode(sealed.removeprefix(_PREFIX).encode("ascii"))
            return self._aead.decrypt(raw[:12], raw[12:], agent_id.encode("utf-8")).decode("utf-8")
        except (InvalidTag, ValueError, UnicodeError):
            raise ForeignSeal(
                "the agent's secret was stored by a control plane with another server key: give every replica the"
                f" same {KEY_ENV} (or key file); the agent's next heartbeat stores it again"
            ) from None

    def matches(self, agent_id: str, sealed: str | None, secret: str) -> bool:
        """Whether ``sealed`` holds ``secret`` (so a push that repeats it writes nothing)."""
        if sealed is None:
            return False
        with contextlib.suppress(ForeignSeal):
            return secrets.compare_digest(self.open(agent_id, sealed).encode(), secret.encode())
        return False


def load(environ: Mapping[str, str], key_file: Path | None = None) -> SecretBox:
    """The server's key: the environment, else the key file (created 0600 when it is the default and missing).

    Raises:
        ConfigError: a key file that others may read, or too short a key.
    """
    value = environ.get(KEY_ENV, "").strip()
    if value:
        return SecretBox(value)
    named = key_file or (Path(environ[KEY_FILE_ENV]) if environ.get(KEY_FILE_ENV) else None)
    path = named or data_dir(environ) / KEY_FILE_NAME
    if named is None and not path.exists():
        _create(path)
    try:
        info = path.stat()
        text = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError(f"cannot read the server key file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"the server key file {path} is not text: it holds one key of letters and digits") from None
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(f"the server key file {path} may be read by others: chmod 600 {path}")
    return SecretBox(text)


def _create(path: Path) -> None:
    """Write a new random key, whole and 0600, unless another server starting alongside wrote one first."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    draft = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(secrets.token_urlsafe(32) + "\n")
            file.flush()
            os.fsync(file.fileno())
        with contextlib.suppress(FileExistsError):  # the first one wins; everyone reads it
            os.link(draft, path)
    finally:
        draft.unlink(missing_ok=True)
