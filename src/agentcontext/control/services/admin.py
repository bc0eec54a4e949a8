"""Approvals and administration: users and agents made by an administrator, MCP servers approved by the
workspace's owner (relayed to the agent, which records the approval in its own user's trust store)."""

from __future__ import annotations

from agentcontext.control import identity, visibility, wire
from agentcontext.control.agent_reach import AgentReach
from agentcontext.control.identity import UserPrincipal
from agentcontext.control.store import Store
from agentcontext.errors import ForbiddenError, UnavailableError

UNREACHABLE = "the workspace agent has not said where to reach it"


class AdminService:
    def __init__(self, store: Store, reach: AgentReach) -> None:
        self._store = store
        self._reach = reach

    async def create_user(self, caller: UserPrincipal, name: str, *, admin: bool) -> wire.IssuedResponse:
        """Raises: ForbiddenError (not an administrator), ConflictError, InvalidRequestError."""
        _admin_only(caller)
        issued = await self._store.write_orm(lambda s: identity.create_user(s, name, admin=admin))
        return wire.IssuedResponse.model_validate(issued)

    async def create_agent(
        self, caller: UserPrincipal, workspace: str, name: str, *, parent: str | None = None
    ) -> wire.IssuedResponse:
        """Raises: ForbiddenError (not an administrator), ConflictError, NotFoundError, InvalidRequestError."""
        _admin_only(caller)
        issued = await self._store.write_orm(lambda s: identity.create_agent(s, workspace, name, parent=parent))
        return wire.IssuedResponse.model_validate(issued)

    async def approve_mcp(
        self, user: UserPrincipal, agent_id: str, server: str, digest: str, tool_set: str = ""
    ) -> str:
        """Relay an approval to the agent, which records it in its own user's trust store.

        Approving runs code on the workspace's machine, so only the workspace's owner may (an
        administrator, for a workspace nobody owns: ``visibility.may_approve``). The agent checks that the
        entry (``digest``) and, for a changed server, the tools (``tool_set``) are still what the user was shown.

        Raises:
            NotFoundError: no such agent for this user. ForbiddenError: not the workspace's owner.
            UnavailableError: the agent cannot be reached. AgentReplyError: the agent refused (changed since).
        """
        row = await self._store.read(lambda c: visibility.visible_agent(c, user, agent_id))
        if not visibility.may_approve(user, row.owner_id):
            raise ForbiddenError("only the workspace's owner may approve its MCP servers")
        address = self._reach.address(agent_id, row.url, row.sealed_secret)
        if address is None:
            raise UnavailableError(UNREACHABLE)
        return await self._reach.link.approve_mcp(address, server, digest, tool_set)


def _admin_only(caller: UserPrincipal) -> None:
    if not caller.is_admin:
        raise ForbiddenError("only an administrator may do this")
