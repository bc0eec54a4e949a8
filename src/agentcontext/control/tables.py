"""The tables as SQLAlchemy Core sees them: what the hot paths' prebuilt statements are made of.

The ORM models (``models``) define the schema; cold paths (administration, identity,
personal skills) use them through sessions. Pushes, prompts, chat tools, refreshes,
heartbeats and event streams run prebuilt Core statements on these tables instead: building
a statement, or an ORM unit of work, costs more than running the statement.
"""

from __future__ import annotations

from typing import cast

import sqlalchemy as sa

from agentcontext.control.models import (
    Agent,
    Chat,
    ChatFile,
    ChatResource,
    Content,
    PersonalSkill,
    Snapshot,
    SnapshotResource,
    User,
    Workspace,
)

agents = cast(sa.Table, Agent.__table__)
chats = cast(sa.Table, Chat.__table__)
chat_files = cast(sa.Table, ChatFile.__table__)
chat_resources = cast(sa.Table, ChatResource.__table__)
contents = cast(sa.Table, Content.__table__)
personal_skills = cast(sa.Table, PersonalSkill.__table__)
snapshots = cast(sa.Table, Snapshot.__table__)
snapshot_resources = cast(sa.Table, SnapshotResource.__table__)
workspaces = cast(sa.Table, Workspace.__table__)
users = cast(sa.Table, User.__table__)
