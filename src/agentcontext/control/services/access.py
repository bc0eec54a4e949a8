"""Who is calling: API tokens (users' and agents') and the dashboard's logins and sessions.

A checked token or session is trusted for ``auth_ttl`` seconds before the database is asked
again: a rotated or revoked one stops working on every replica within that time.
"""

from __future__ import annotations

from agentcontext.control import identity, sessions
from agentcontext.control.models import now
from agentcontext.control.store import Store
from agentcontext.control.turn_cache import Expiring


class AccessService:
    def __init__(self, store: Store, auth_ttl: float) -> None:
        self._store = store
        self._principals: Expiring[identity.Principal] = Expiring(auth_ttl)
        self._sessions: Expiring[sessions.SessionUser] = Expiring(auth_ttl)  # by the secret's hash

    async def authenticate(self, token: str) -> identity.Principal:
        """Raises: AuthError."""
        digest = identity.token_hash(token)
        known = self._principals.get(digest)
        if known is not None:
            return known
        principal = await self._store.read_one(lambda c: identity.authenticate(c, token))
        self._principals.put(digest, principal)
        return principal

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
