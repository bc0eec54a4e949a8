"""Which agent serves a workspace's chats: Coder's agentselect tests (coder.md 8.7, rules in 9).

``TestFindChatAgent`` and ``TestIsChatAgent`` case for case, with Coder's case names as
test ids: a single agent named with the ``-coderd-chat`` suffix (any case) wins; more than
one is an error; otherwise the first sub-agent, else the first root agent, each group
sorted by display order, lowercase name, exact name, then id.
"""

from __future__ import annotations

import uuid

import pytest

from agentcontext.control import chats, identity
from agentcontext.control.agentselect import DEFAULT_SUFFIX, Candidate, find_chat_agent, is_chat_agent
from agentcontext.control.db import Database
from agentcontext.errors import ConflictError, NotFoundError

PARENT = str(uuid.uuid4())


def root(name: str, display_order: int, agent_id: str | None = None) -> Candidate:
    return Candidate(agent_id or str(uuid.uuid4()), name, display_order)


def child(name: str, display_order: int) -> Candidate:
    return Candidate(str(uuid.uuid4()), name, display_order, parent_id=PARENT)


FIND_CHAT_AGENT = [
    pytest.param([root("alpha", 0), root("dev-coderd-chat", 2), root("zeta", 1)], 1, id="SingleSuffixMatch"),
    pytest.param([root("alpha", 0), root("Dev-Coderd-Chat", 2), root("zeta", 1)], 1, id="SuffixMatchCaseInsensitive"),
    pytest.param([root("zeta", 2), root("bravo", 1), root("alpha", 1)], 2, id="NoSuffixMatchFallbackDeterministic"),
    pytest.param([root("Bravo", 3), root("alpha", 3), root("charlie", 3)], 1, id="NoSuffixMatchFallbackByName"),
    pytest.param([root("Dev", 0), root("dev", 0)], 0, id="CaseOnlyNameTieFallbackDeterministic"),
    pytest.param(
        [
            root("dev", 0, "00000000-0000-0000-0000-000000000002"),
            root("dev", 0, "00000000-0000-0000-0000-000000000001"),
        ],
        1,
        id="ExactNameTieFallbackByID",
    ),
    pytest.param([root("host", 0), child("devcontainer", 1)], 1, id="SubAgentPreferredOverRoot"),
    pytest.param([root("alpha", 0), child("dev-coderd-chat", 1)], 1, id="SubAgentSuffixMatchWins"),
    pytest.param([child("alpha", 1), root("dev-coderd-chat", 0)], 1, id="RootSuffixMatchWinsOverSubAgent"),
    pytest.param([child("zeta", 0), child("alpha", 0)], 1, id="MultipleSubAgentsSortedDeterministically"),
    pytest.param([child("zeta", 0), child("alpha", 0)], 1, id="OnlySubAgents"),
    pytest.param([root("solo", 5)], 0, id="SingleRootAgent"),
    pytest.param(
        [root("alpha", 0), root("zeta", 1), root("preferred-coderd-chat", 99)], 2, id="SuffixAgentWinsRegardlessOfOrder"
    ),
]


@pytest.mark.parametrize(("agents", "want"), FIND_CHAT_AGENT)
def test_find_chat_agent(agents: list[Candidate], want: int) -> None:
    assert find_chat_agent(agents) == agents[want]


@pytest.mark.parametrize(("agents", "want"), FIND_CHAT_AGENT)
def test_find_chat_agent_does_not_depend_on_the_order_agents_are_listed_in(agents: list[Candidate], want: int) -> None:
    assert find_chat_agent(list(reversed(agents))) == agents[want]


@pytest.mark.parametrize(
    ("agents", "names"),
    [
        pytest.param(
            [root("alpha-coderd-chat", 2), root("beta-coderd-chat", 1), root("gamma", 0)],
            ("alpha-coderd-chat", "beta-coderd-chat"),
            id="MultipleSuffixMatchesError",
        ),
        pytest.param(
            [root("alpha-coderd-chat", 0), child("beta-coderd-chat", 1)],
            ("alpha-coderd-chat", "beta-coderd-chat"),
            id="MultipleSuffixMatchesAcrossRootAndSubAgentError",
        ),
    ],
)
def test_find_chat_agent_refuses_more_than_one_suffix_match(agents: list[Candidate], names: tuple[str, ...]) -> None:
    with pytest.raises(ConflictError) as caught:
        find_chat_agent(agents)

    message = str(caught.value)
    assert 'multiple agents match the chat suffix "-coderd-chat"' in message
    assert all(name in message for name in names)
    assert "only one agent should use this suffix" in message


def test_find_chat_agent_with_an_empty_agent_list_finds_none() -> None:  # Coder's EmptyAgentList
    with pytest.raises(NotFoundError, match="^no eligible workspace agents found$"):
        find_chat_agent([])


def test_more_than_one_match_is_an_error_in_coders_exact_words() -> None:
    agents = [root("alpha-coderd-chat", 2), root("beta-coderd-chat", 1), root("gamma", 0)]

    with pytest.raises(ConflictError) as caught:
        find_chat_agent(agents)

    assert str(caught.value) == (
        'multiple agents match the chat suffix "-coderd-chat": beta-coderd-chat, alpha-coderd-chat;'
        " only one agent should use this suffix"
    )


@pytest.mark.parametrize(
    ("name", "want"),
    [
        pytest.param("agent-coderd-chat", True, id="ExactSuffix"),
        pytest.param("agent-CODERD-CHAT", True, id="UppercaseSuffix"),
        pytest.param("agent-Coderd-Chat", True, id="MixedCaseSuffix"),
        pytest.param("my-agent", False, id="NoSuffix"),
        pytest.param("-coderd-chat", True, id="SuffixOnly"),
        pytest.param("agent-coderd", False, id="PartialSuffix"),
    ],
)
def test_is_chat_agent(name: str, want: bool) -> None:
    assert is_chat_agent(name) is want


def test_the_default_suffix_is_coders() -> None:
    assert DEFAULT_SUFFIX == "-coderd-chat"


def test_a_configured_suffix_replaces_the_default() -> None:
    agents = [root("dev-coderd-chat", 0), root("main-ai", 1)]

    assert find_chat_agent(agents, "-AI") == agents[1]
    assert is_chat_agent("main-ai", "-AI") and not is_chat_agent("dev-coderd-chat", "-ai")
    with pytest.raises(ConflictError, match='chat suffix "-ai": a-ai, b-ai;'):
        find_chat_agent([root("a-ai", 0), root("b-ai", 1)], "-ai")


def test_the_workspace_chat_agent_is_chosen_from_the_stored_agents(db: Database) -> None:
    db.write(lambda s: identity.create_agent(s, "ws", "host", display_order=0))
    db.write(lambda s: identity.create_agent(s, "ws", "zeta", parent="host", display_order=1))
    sub = db.write(lambda s: identity.create_agent(s, "ws", "alpha", parent="host", display_order=1))
    db.write(lambda s: identity.create_agent(s, "other", "x-coderd-chat"))  # another workspace's agent

    with db.read() as session:
        workspace = identity.workspace_by_name_or_id(session, "ws")
        assert chats.select_agent(session, workspace.id, DEFAULT_SUFFIX) == sub.id


def test_a_workspace_without_agents_has_no_chat_agent(db: Database) -> None:
    empty = db.write(lambda s: identity.ensure_workspace(s, "empty").id)

    with db.read() as session, pytest.raises(NotFoundError, match="no eligible workspace agents found"):
        chats.select_agent(session, empty, DEFAULT_SUFFIX)
