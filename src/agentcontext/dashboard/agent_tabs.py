"""The inventory's tabs: each agent's own view of a snapshot's work dir, the snapshot's own profile first.

The database holds the snapshot of the agent's own profile only, so the other profiles'
views come live from the workspace agent (``ViewService.agent_views``), which scans the
work dir under each. When the agent is offline or cannot answer, the tabs say why, and the
snapshot's own profile is still shown, from its stored resources (its budget then the
profile's default). Tabs are links (``?view=PROFILE``): the page is rendered with the
chosen tab, so they work without script.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from agentcontext.control.identity import UserPrincipal
from agentcontext.control.services.views import Inventory, ViewService
from agentcontext.errors import AgentContextError
from agentcontext.views.agents import AGENTS, VIEW_PROFILES
from agentcontext.wire.views import AgentViewBody

NEEDS_AGENT = (
    "The per-agent view needs the workspace agent online: it reads the work dir under each agent's rules."
    " This snapshot's own profile is shown from its stored resources."
)


@dataclass(frozen=True, slots=True)
class Tab:
    profile: str
    label: str
    own: bool  # the profile the snapshot was taken under
    selected: bool
    href: str


@dataclass(frozen=True, slots=True)
class AgentTabs:
    tabs: tuple[Tab, ...]
    selected: str
    view: AgentViewBody | None  # the selected tab's view; None when it cannot be shown
    stored: bool  # the view was built from the stored snapshot, not by the agent
    unavailable: str | None  # why the agent's views are not shown
    version: int | None  # the agent's snapshot version its views were computed at


async def build(views: ViewService, user: UserPrincipal, inv: Inventory, chosen: str, status: str) -> AgentTabs | None:
    """The tabs of ``inv``'s snapshot, ``chosen`` selected (else the own profile); None without a snapshot."""
    if inv.snapshot is None:
        return None
    own = inv.snapshot.profile
    order = [own, *(p for p in VIEW_PROFILES if p != own)]
    selected = chosen if chosen in order else own
    live, unavailable = None, None
    if not inv.agent.online:
        unavailable = NEEDS_AGENT
    else:
        try:
            live = await views.agent_views(user, inv.agent.id)
        except AgentContextError as exc:
            unavailable = (
                f"The other agents' views are unavailable: {exc}. This snapshot's own profile is shown as stored."
            )
    view = next((v for v in live.agents if v.profile == selected), None) if live else None
    stored = view is None and selected == own and own in VIEW_PROFILES
    if stored:
        view = await views.stored_view(user, inv.agent.id, own)
    tabs = tuple(
        Tab(
            p,
            AGENTS.get(p, p),
            p == own,
            p == selected,
            "?" + urlencode({"status": status, "view": p} if status else {"view": p}),
        )
        for p in order
    )
    return AgentTabs(tabs, selected, view, stored, unavailable, live.version if live else None)
