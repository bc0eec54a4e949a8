"""The control plane: its services over one store and one way to reach agents, made together.

``ControlPlane`` holds the database, the event broker and the settings, and makes each service
(``services``): ``sync``, ``chats``, ``skills``, ``access``, ``admin`` and ``views``. The API's
routes, the chats' MCP server and the dashboard call those services; nothing here runs a query.
"""

from __future__ import annotations

from agentcontext.control import ingest
from agentcontext.control.agent_link import AgentLink
from agentcontext.control.agent_reach import AgentReach
from agentcontext.control.agent_secret import SecretBox
from agentcontext.control.db import Database
from agentcontext.control.events import Broker
from agentcontext.control.services.access import AccessService
from agentcontext.control.services.admin import AdminService
from agentcontext.control.services.chats import ChatService
from agentcontext.control.services.skills import SkillService
from agentcontext.control.services.sync import SyncService
from agentcontext.control.services.views import ViewService
from agentcontext.control.settings import ControlSettings
from agentcontext.control.store import Store
from agentcontext.control.turn_cache import Recent


class ControlPlane:
    def __init__(
        self,
        db: Database,
        broker: Broker,
        settings: ControlSettings | None = None,
        link: AgentLink | None = None,
        secrets: SecretBox | None = None,
    ) -> None:
        self.db = db
        self.broker = broker
        self.settings = settings = settings or ControlSettings()
        self.store = Store(db, broker, on_loop=settings.store_on_loop)
        self.reach = AgentReach(link or AgentLink(), secrets or SecretBox.ephemeral(), settings.agent_networks)
        written: Recent[ingest.Written] = Recent()  # by agent: the snapshot rows this replica wrote last
        self.sync = SyncService(self.store, self.reach, settings, written)
        self.chats = ChatService(self.store, self.reach, settings, written)
        self.skills = SkillService(self.store)
        self.access = AccessService(self.store, settings.auth_ttl)
        self.admin = AdminService(self.store, self.reach)
        self.views = ViewService(self.store, self.reach)

    async def aclose(self) -> None:
        self.store.close()
        await self.reach.link.aclose()
        await self.broker.aclose()
