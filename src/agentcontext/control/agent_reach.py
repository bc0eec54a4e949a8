"""How the services reach a workspace agent: where it may be called, with its per-run secret unsealed here.

An agent advertises its URL and a per-run secret with each push and heartbeat; the secret is
stored sealed under the server key (``agent_secret``). ``address`` gives what a call needs: the
URL, refused when it is outside the hosts and networks agents may be called at
(``agent_networks``: a URL kept from before the operator narrowed them), and the secret,
unsealed once per sealed text. Nothing else of the control plane opens a sealed secret, and
nothing outside the control plane sees one.
"""

from __future__ import annotations

import logging

from agentcontext.control.agent_link import AgentAddress, AgentLink
from agentcontext.control.agent_networks import AgentNetworks
from agentcontext.control.agent_secret import ForeignSeal, SecretBox
from agentcontext.control.turn_cache import Recent
from agentcontext.wire.sync import AgentInfo, ContractError

log = logging.getLogger("agentcontext.control")


class AgentReach:
    def __init__(self, link: AgentLink, secrets: SecretBox, networks: AgentNetworks) -> None:
        self.link = link
        self.secrets = secrets
        self.networks = networks
        # by agent: its per-run secret as last unsealed, keyed by the sealed text (a new run seals a new one); the
        # server key that unseals every one of them is in this process anyway
        self._opened: Recent[str] = Recent()

    def address(self, agent_id: str, url: str | None, sealed_secret: str | None) -> AgentAddress | None:
        """Where and how to call the agent: its URL and its per-run secret, unsealed (unusable: a URL the agent may
        not advertise, kept from before the check or from before the operator narrowed ``agent_networks``)."""
        if not url:
            return None
        refused = self.networks.refusal(url)
        if refused is not None:
            return AgentAddress(url, None, unusable=f"the control plane does not call this agent: {refused}")
        if sealed_secret is None:
            return AgentAddress(url, None)
        opened = self._opened.get(agent_id, sealed_secret)
        if opened is not None:
            return AgentAddress(url, opened)
        try:
            opened = self.secrets.open(agent_id, sealed_secret)
        except ForeignSeal as exc:
            log.error("agent %s: %s", agent_id, exc)
            return AgentAddress(url, None, unusable=str(exc))
        self._opened.put(agent_id, sealed_secret, opened)
        return AgentAddress(url, opened)

    def check(self, info: AgentInfo) -> None:
        """Raises: ContractError for a URL outside the hosts and networks agents may advertise (refused whole)."""
        refused = self.networks.refusal(info.url) if info.url is not None else None
        if refused is not None:
            raise ContractError(refused)
