"""Which of a workspace's agents serves its chats (Coder's ``agentselect``, coder.md 9).

An agent whose name ends with the chat suffix (``-coderd-chat`` by default, compared
case-insensitively; a name equal to the suffix matches) is the chat agent; more than one
such agent is an error. Without one, the first sub-agent wins, else the first root agent.
Each group is sorted by display order, lowercase name, exact name, then id, so the choice
never depends on the order the database returns rows in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentcontext.errors import ConflictError, NotFoundError
from agentcontext.settings.declared import BY_KEY

DEFAULT_SUFFIX: str = BY_KEY["server.chat_suffix"].default


@dataclass(frozen=True, slots=True)
class Candidate:
    id: str
    name: str
    display_order: int = 0
    parent_id: str | None = None


def is_chat_agent(name: str, suffix: str = DEFAULT_SUFFIX) -> bool:
    return name.lower().endswith(suffix.lower())


def _order(agent: Candidate) -> tuple[int, str, str, str]:
    return (agent.display_order, agent.name.lower(), agent.name, agent.id)


def find_chat_agent(agents: Sequence[Candidate], suffix: str = DEFAULT_SUFFIX) -> Candidate:
    """The agent chats of this workspace use.

    Raises:
        NotFoundError: the workspace has no agents.
        ConflictError: more than one agent carries the suffix.
    """
    if not agents:
        raise NotFoundError("no eligible workspace agents found")
    subs = sorted((a for a in agents if a.parent_id is not None), key=_order)
    roots = sorted((a for a in agents if a.parent_id is None), key=_order)
    matches = [a for a in (*subs, *roots) if is_chat_agent(a.name, suffix)]
    if len(matches) > 1:
        names = ", ".join(a.name for a in matches)
        raise ConflictError(
            f'multiple agents match the chat suffix "{suffix}": {names}; only one agent should use this suffix'
        )
    if matches:
        return matches[0]
    return subs[0] if subs else roots[0]
