"""The control plane's services, one per concern, each returning wire models (``control.wire``) or frozen
dataclasses: the routes serialise them, the chats' MCP server and the dashboard show them.

- ``sync.SyncService``: what agents push and beat; agents marked offline; discovered files rechecked.
- ``chats.ChatService``: chats, their pins and refreshes, each turn's prompt and tools, tool calls.
- ``skills.SkillService``: each user's personal skills.
- ``access.AccessService``: who a token or a dashboard session is.
- ``admin.AdminService``: users and agents made by administrators, MCP approvals by a workspace's owner.
- ``views.ViewService``: the overview, workspaces, each agent's view and the dashboard's agent pages.

They share one ``store.Store`` (where database work runs) and one ``agent_reach.AgentReach``
(how an agent is called); ``plane.ControlPlane`` makes them. Who may see a workspace is decided
in one place, ``visibility``.
"""
