"""How each resource reaches the model, where its discovery did not say.

Claude Code's walk labels its files as it finds them (imports, rules, nested folders), and a
child project's files carry their root. For the rest the rule is plain, applied once after the
doc budget: an instruction file that gives the doc text loads at ``startup``; any other is
``not_loaded`` with its reason (shadowed, invalid, left out by the budget, blank). An offered
skill loads at ``startup`` (:data:`OFFERED`, set as the skill is read): its name and description
are in the skills prompt from the first turn, its body is read when the model uses it; any other
skill is ``not_loaded`` with its reason.
A resource the snapshot caps exclude later becomes ``not_loaded`` there
(:meth:`Resource.with_status`).
"""

from __future__ import annotations

from collections.abc import Iterable

from agentcontext.instructions.chain import relabelled
from agentcontext.resource import Kind, Load, LoadType, Resource, Status

_STARTUP_FILE = Load(LoadType.STARTUP)
OFFERED = Load(LoadType.STARTUP, reason="listed in the skills prompt; its body is read when the model uses the skill")
_NOTHING = "empty or whitespace only: nothing to load"


def labelled(resources: Iterable[Resource]) -> list[Resource]:
    """``resources`` with a ``load`` on every instruction file and skill that had none."""
    return [r if r.load is not None else _labelled(r) for r in resources]


def _labelled(resource: Resource) -> Resource:
    kind = resource.kind
    if kind is Kind.INSTRUCTION_FILE:
        gives_text = resource.doc_order is not None and bool((resource.content or "").strip())
        load = _STARTUP_FILE if gives_text else Load(LoadType.NOT_LOADED, reason=resource.error or _NOTHING)
    elif kind is Kind.SKILL:
        offered = resource.status is Status.OK and bool(resource.name)
        load = OFFERED if offered else Load(LoadType.NOT_LOADED, reason=resource.error or "not offered")
    else:
        return resource
    return relabelled(resource, resource.content, load, resource.doc_order)
