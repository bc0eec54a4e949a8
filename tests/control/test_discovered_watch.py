"""Discovered files watched by the agent (issue 34, item 3), against real ``server`` and ``agent`` processes.

A chat's ``touched`` call brings in a nested AGENTS.md that is not in the snapshot; the agent
watches the folders its answer depended on, so an edit there, a new file, a removal or a
rename marks the chat out of date within the watcher's debounce plus a second (an edit made
before that watch is up: within its first sign of life, a second more), although the
agent's heartbeats (15 s) and the server's rechecks on them (10 s) are far apart. Past the
watch cap, or after the agent restarts, the heartbeats' rechecks are what marks the chat.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from agentcontext.agent.watcher import WATCH_ALIVE_MS
from agentcontext.control.client import ControlClient
from agentcontext.settings.declared import BY_KEY
from agentcontext.testing import make_workspace
from tests.control.processes import EventStream, Process, admin_token, agent, create_agent, event_stream, server
from tests.control.processes import write_atomic as edit
from tests.control.test_flow import RULES, any_db, logs, pinned_chat
from tests.helpers import poll

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
__all__ = ["any_db", "logs"]  # fixtures

DEBOUNCE = BY_KEY["agent.debounce_ms"].default / 1000
LIMIT = DEBOUNCE + 1.0  # seconds from the change on disk to "out_of_date" on the event stream
BILLING = "# Billing\n\nUse cents.\n"
FILES = {"AGENTS.md": RULES, "services/billing/AGENTS.md": BILLING, "services/billing/deep/a.py": ""}


def timed(stream: EventStream, change: Callable[[], object], *, timeout: float = 10.0) -> tuple[float, list[str]]:
    """Seconds from ``change`` to the chat's next "out_of_date", and the paths it names."""
    started = time.monotonic()
    change()
    event = stream.wait_for("out_of_date", timeout=timeout)
    return event.at - started, list(event.data["changed"])


def refreshed(client: ControlClient, stream: EventStream, chat: str) -> list[str]:
    """Refresh the chat (it is up to date again); the discovered files it holds now."""
    client.refresh(chat)
    stream.wait_for("refreshed")
    return sorted(r.path for r in client.chat(chat).context.resources if r.origin == "discovered")


def test_an_edit_a_new_file_a_removal_and_a_rename_each_mark_the_chat_within_the_debounce_and_a_second(
    tmp_path: Path, logs: Path, any_db: str, record_property: Callable[[str, object], None]
) -> None:
    work = make_workspace(tmp_path / "work", FILES).resolve()
    billing, deep = work / "services/billing", work / "services/billing/deep"
    with server(any_db, logs) as control:  # rechecks on heartbeats at most every 10 s; the agent beats every 15 s
        admin = admin_token(control)
        token = create_agent(any_db, "ws", "dev")
        with agent(work, logs, control.url, token), ControlClient(control.url, admin) as client:
            chat = pinned_chat(client, control.url, admin).id
            took: dict[str, float] = {}
            with event_stream(control.url, admin, chat) as stream:
                stream.wait_for("state")
                added = client.touched(chat, ["services/billing/deep/a.py"]).added
                assert [a.path for a in added] == [str(billing / "AGENTS.md")]
                # at once: the watch the answer asked for may not be up yet, and the edit still counts
                first, changed = timed(stream, lambda: edit(billing / "AGENTS.md", "# Billing\n\nCents, still.\n"))
                assert changed == [str(billing / "AGENTS.md")]
                refreshed(client, stream, chat)  # the watch is up: it saw the edit, or came up and told it

                took["edit"], changed = timed(stream, lambda: edit(billing / "AGENTS.md", "# Billing\n\nDecimal.\n"))
                assert changed == [str(billing / "AGENTS.md")]
                held = refreshed(client, stream, chat)

                took["new file"], changed = timed(stream, lambda: (deep / "AGENTS.md").write_text("# Deep\n\nDeep.\n"))
                assert changed == [str(deep / "AGENTS.md")]
                assert refreshed(client, stream, chat) == [str(billing / "AGENTS.md"), str(deep / "AGENTS.md")]

                took["removal"], changed = timed(stream, (deep / "AGENTS.md").unlink)
                assert changed == [str(deep / "AGENTS.md")]
                assert refreshed(client, stream, chat) == [str(billing / "AGENTS.md")]

                took["rename"], changed = timed(stream, lambda: os.replace(billing, work / "services/payments"))
                assert changed == [str(billing / "AGENTS.md")]
                assert refreshed(client, stream, chat) == []
    record_property(
        "discovered_out_of_date_s",
        {"edit as the watch began": round(first, 3)} | {k: round(v, 3) for k, v in took.items()},
    )
    print(
        f"change -> out_of_date: edit as the watch began {first * 1000:.0f} ms,",
        ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in took.items()),
    )
    assert held == [str(billing / "AGENTS.md")]
    assert first < LIMIT + WATCH_ALIVE_MS / 1000  # at worst, the new watch's first sign of life tells it
    assert max(took.values()) < LIMIT, took


def _chat_with_billing(client: ControlClient, control: Process, admin: str) -> str:
    chat = pinned_chat(client, control.url, admin).id
    assert client.touched(chat, ["services/billing/deep/a.py"]).added
    return chat


def test_past_the_watch_cap_the_heartbeats_recheck_and_mark_the_chat(tmp_path: Path, logs: Path) -> None:
    """The agent says its watch is not whole, so the server keeps rechecking on its heartbeats (an agent whose
    watch is whole is rechecked every 300 s once its run was asked about every file: the second edit would wait)."""
    db = f"sqlite:///{tmp_path / 'control.db'}"
    work = make_workspace(tmp_path / "work", FILES).resolve()
    nested = work / "services/billing/AGENTS.md"
    with server(db, logs, extra=("--recheck-every", "0.5")) as control:
        admin = admin_token(control)
        token = create_agent(db, "ws", "dev")
        capped = ("--heartbeat", "1", "--config", str(_config(tmp_path, "[agent]\ndiscovered_watch_cap = 1\n")))
        with agent(work, logs, control.url, token, *capped), ControlClient(control.url, admin) as client:
            chat = _chat_with_billing(client, control, admin)
            with event_stream(control.url, admin, chat) as stream:
                stream.wait_for("state")
                took = []
                for text in ("Decimal.", "Integers again."):  # the first recheck of the run asked about every file
                    seconds, changed = timed(stream, partial(edit, nested, f"# Billing\n\n{text}\n"))
                    assert changed == [str(nested)]
                    took.append(seconds)
                    refreshed(client, stream, chat)
    assert max(took) < 1 + 2  # within a heartbeat (1 s), and its recheck


def test_a_restarted_agent_is_rechecked_on_its_first_heartbeat_and_then_watches_again(
    tmp_path: Path, logs: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'control.db'}"
    work = make_workspace(tmp_path / "work", FILES).resolve()
    nested = work / "services/billing/AGENTS.md"
    with server(db, logs) as control:
        admin = admin_token(control)
        token = create_agent(db, "ws", "dev")
        with ControlClient(control.url, admin) as client:
            with agent(work, logs, control.url, token):
                chat = _chat_with_billing(client, control, admin)
            with event_stream(control.url, admin, chat) as stream:
                stream.wait_for("state")
                edit(nested, "# Billing\n\nEdited while the agent was down.\n")
                with agent(work, logs, control.url, token, "--heartbeat", "1", "-v", name="agent-again") as again:
                    # the new run knows nothing: its first heartbeat's recheck finds the edit (and teaches it)
                    first = stream.wait_for("out_of_date", timeout=15)
                    client.refresh(chat)
                    stream.wait_for("refreshed")
                    up = "discovered files: watching "  # logged (-v) once the watch it taught is up...
                    poll(lambda: again.log.read_text(errors="replace"), lambda log: up in log, "the watch up", 10)
                    time.sleep(1.0)  # ...and the recheck its beginning asked for is over: the edit is the watch's
                    took, changed = timed(stream, lambda: edit(nested, "# Billing\n\nAnd again.\n"))
    assert first.data["changed"] == [str(nested)]
    assert changed == [str(nested)]
    assert took < LIMIT


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "agent.toml"
    path.write_text(text, encoding="utf-8")
    return path
