"""Who is calling: API tokens (users' and agents') and the dashboard's logins and sessions.

A checked token is kept while nothing changed who any token names: the database counts such
changes itself (triggers of migration 0005: a rotated, revoked or deleted token, a user or agent
renamed or gone, whoever wrote it), and a replica reads that count at most once every
``auth_ttl`` seconds, forgetting every checked token when it moved. So a rotated or revoked token
still stops working on every replica within ``auth_ttl``, while an agent's heartbeats (15 s
apart) no longer look its token up each time. A dashboard session is trusted ``auth_ttl`` seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from agentcontext.control import identity, sessions
from agentcontext.control.models import now
from agentcontext.control.store import Store
from agentcontext.control.turn_cache import Expiring

TOKEN_TRUST = 3600.0  # seconds a checked token is kept at most, the count unchanged (a bound, not the guarantee)
TOKENS_KEPT = 65_536  # checked tokens kept (the least recently used go first)


class AccessService:
    def __init__(self, store: Store, auth_ttl: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._store = store
        self._ttl = auth_ttl
        self._clock = clock
        self._principals: Expiring[identity.Principal] = Expiring(
            TOKEN_TRUST if auth_ttl > 0 else 0, TOKENS_KEPT, clock=clock
        )
        self._sessions: Expiring[sessions.SessionUser] = Expiring(auth_ttl)  # by the secret's hash
        self._epoch: int | None = None  # the count of changes as last read
        self._epoch_until = float("-inf")  # the clock before which that read is trusted
        self._generation = 0  # bumped whenever the checked tokens are forgotten

    async def authenticate(self, token: str) -> identity.Principal:
        """Raises: AuthError."""
        await self._current()
        digest = identity.token_hash(token)
        known = self._principals.get(digest)
        if known is not None:
            return known
        generation = self._generation
        principal = await self._store.read_one(lambda c: identity.authenticate(c, token))
        if generation == self._generation:  # not read before a change the count has since shown
            self._principals.put(digest, principal)
        return principal

    async def _current(self) -> None:
        """Forget every checked token when the database's count of changes moved since it was read."""
        if self._clock() < self._epoch_until:
            return
        began = self._clock()
        epoch = await self._store.read_one(identity.auth_epoch)
        if epoch is None or epoch != self._epoch:  # None: no count kept, so nothing may be kept on it
            self._principals.clear()
            self._generation += 1
        self._epoch = epoch
        self._epoch_until = max(self._epoch_until, began + self._ttl)

    async def begin_login(self, token: str) -> sessions.Issued:
        """A login waiting for the user's yes. Raises: AuthError (not a user's API token)."""
        return await self._store.write(lambda c: sessions.begin(c, token, now=now()))

    async def confirm_login(self, secret: str) -> sessions.Issued:
        """Raises: AuthError (no such login waiting, or expired)."""
        return await self._store.write(lambda c: sessions.confirm(c, secret, now=now()))

    async def session(self, secret: str) -> sessions.SessionUser:
        """Who a dashboard session signs in as. Raises: AuthError (no such session, or expired)."""
        digest = identity.token_hash(secret)
        known = self._sessions.get(digest)
        if known is not None:
            return known
        found = await self._store.read_one(lambda c: sessions.find(c, secret, now=now()))
        self._sessions.put(digest, found)
        return found

    async def end_session(self, secret: str) -> None:
        """Log out: the session is deleted (another replica may take ``auth_ttl`` to notice)."""
        self._sessions.discard(identity.token_hash(secret))
        await self._store.write(lambda c: sessions.end(c, secret))
