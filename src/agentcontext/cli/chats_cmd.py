"""``agentcontext chats``: create, show, refresh and prompt chats on a control plane.

The server and token come from ``--server`` and ``--token-file`` (or ``--token``, which shows
in ``ps``), else ``AGENTCONTEXT_SERVER`` / ``AGENTCONTEXT_TOKEN``, else what ``agentcontext up``
stored (its server and your user's token), as ``agentcontext status`` finds them. Every
command takes ``--json`` and then prints exactly what the API returned.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from agentcontext.cli.common import STATUS_STYLE, echo_exact, fitted, stdout
from agentcontext.cli.status_cmd import ServerOption, TokenOption, credentials
from agentcontext.cli.tokens import TokenFileOption, resolve_token
from agentcontext.errors import InvalidRequestError
from agentcontext.terminal import plain, shown

if TYPE_CHECKING:
    from pydantic import BaseModel

    from agentcontext.control.client import ControlClient
    from agentcontext.control.wire import ChatResponse

app = typer.Typer(help="Chats on a control plane: create, show, refresh, prompt.", no_args_is_help=True)

JsonFlag = typer.Option(False, "--json", help="Print the API's JSON.")


def _client(server: str | None, token: str | None, token_file: Path | None) -> ControlClient:
    """Raises: ConfigError (no server or token given, and no usable state of ``agentcontext up``)."""
    from agentcontext.control.client import ControlClient  # httpx, only to call a server
    from agentcontext.local.state import default_path

    given = resolve_token(token, token_file, "AGENTCONTEXT_TOKEN")
    return ControlClient(*credentials(server, given, os.environ, default_path()))


def _print_json(answer: BaseModel | list[ChatResponse]) -> None:
    """What the API answered, as it answered it (``client.answered``)."""
    from agentcontext.control.client import answered

    data = [answered(item) for item in answer] if isinstance(answer, list) else answered(answer)
    typer.echo(json.dumps(data, indent=2))


def _show_chat(chat: ChatResponse) -> None:
    out = stdout()
    context = chat.context
    state = "[yellow]out of date[/yellow]" if context.dirty else "[green]up to date[/green]"
    if context.pinned_hash is None:
        state = "[bright_black]not pinned yet[/bright_black]"
    chat_ref = shown(chat.id)
    out.print(f"chat [bold]{chat_ref}[/bold]  {shown(chat.status)}  {state}")
    out.print(f"workspace {shown(chat.workspace_id)}  agent {shown(chat.agent_id or '-')}")
    if context.pinned_hash:
        out.print(f"pinned {shown(context.pinned_hash[:12])} (version {shown(context.pinned_version)})")
    if context.dirty_since:
        since = shown(context.dirty_since)
        out.print(f"out of date since {since}: refresh with `agentcontext chats refresh {chat_ref}`")
    if context.error:
        out.print(f"[red]error:[/red] {shown(context.error)}")
    if context.resources:
        table = Table(box=None, pad_edge=False)
        for column in ("status", "kind", "path", "detail"):
            table.add_column(column, overflow="fold", no_wrap=column == "status")
        for r in context.resources:
            detail = r.error or r.skill_name or ""
            if r.tools is not None:
                detail = f"{len(r.tools)} tools"
            style = STATUS_STYLE.get(r.status, "")
            status = f"[{style}]{r.status}[/{style}]" if style else shown(r.status)
            table.add_row(status, shown(r.kind), shown(r.path), shown(detail))
        out.print(fitted(table, out, wide=("path", "detail")))


@app.command("create")
def create(
    workspace: str | None = typer.Option(None, "--workspace", "-w", help="Workspace name or id."),
    parent: str | None = typer.Option(None, "--parent", help="Create a child chat of this chat (same pin)."),
    status: str | None = typer.Option(None, "--status", help="Initial status (default pending)."),
    title: str = typer.Option("", "--title", help="A title."),
    plan_mode: bool = typer.Option(False, "--plan-mode", help="propose_plan applies the plan-turn rules."),
    server: str | None = ServerOption,
    token: str | None = TokenOption,
    token_file: Path | None = TokenFileOption,
    as_json: bool = JsonFlag,
) -> None:
    """Create a chat bound to the workspace's chat agent and pinned to its latest snapshot."""
    if workspace is None and parent is None:
        raise InvalidRequestError("give --workspace (or --parent for a child chat)")
    with _client(server, token, token_file) as client:
        chat = client.create_chat(workspace, status=status, parent_id=parent, title=title, plan_mode=plan_mode)
    _print_json(chat) if as_json else _show_chat(chat)


@app.command("list")
def list_chats(
    archived: bool = typer.Option(False, "--archived", help="List archived chats instead."),
    server: str | None = ServerOption,
    token: str | None = TokenOption,
    token_file: Path | None = TokenFileOption,
    as_json: bool = JsonFlag,
) -> None:
    """Your chats, newest first."""
    with _client(server, token, token_file) as client:
        found = client.chats(archived=archived)
    if as_json:
        _print_json(found)
        return
    table = Table(box=None, pad_edge=False)
    for column in ("id", "status", "context", "title"):
        table.add_column(column, overflow="fold", no_wrap=column == "status")
    for chat in found:
        context = "out of date" if chat.context.dirty else "up to date"
        table.add_row(shown(chat.id), shown(chat.status), context, shown(chat.title))
    out = stdout()
    out.print(fitted(table, out, wide=("title",)))


@app.command("show")
def show(
    chat_id: str = typer.Argument(..., help="The chat's id."),
    server: str | None = ServerOption,
    token: str | None = TokenOption,
    token_file: Path | None = TokenFileOption,
    as_json: bool = JsonFlag,
) -> None:
    """A chat and its pinned context: what it uses, and whether that is out of date."""
    with _client(server, token, token_file) as client:
        chat = client.chat(chat_id)
    _print_json(chat) if as_json else _show_chat(chat)


@app.command("refresh")
def refresh(
    chat_id: str = typer.Argument(..., help="The chat's id."),
    server: str | None = ServerOption,
    token: str | None = TokenOption,
    token_file: Path | None = TokenFileOption,
    as_json: bool = JsonFlag,
) -> None:
    """Re-pin the chat to the workspace's latest snapshot and show what changed."""
    with _client(server, token, token_file) as client:
        chat = client.refresh(chat_id)
    if as_json:
        _print_json(chat)
        return
    out = stdout()
    diff = chat.diff
    if not (diff.added or diff.removed or diff.changed):
        out.print("Refreshed: nothing changed.")
    for label, colour, paths in (
        ("added", "green", diff.added),
        ("removed", "red", diff.removed),
        ("changed", "yellow", diff.changed),
    ):
        for path in paths:
            out.print(f"[{colour}]{label:8}[/{colour}] {shown(path)}")


@app.command("prompt")
def prompt(
    chat_id: str = typer.Argument(..., help="The chat's id."),
    server: str | None = ServerOption,
    token: str | None = TokenOption,
    token_file: Path | None = TokenFileOption,
    as_json: bool = JsonFlag,
) -> None:
    """The system prompt and tool list the chat's next model call gets."""
    with _client(server, token, token_file) as client:
        turn = client.prompt(chat_id)
    if as_json:
        _print_json(turn)
        return
    echo_exact(turn.system)
    typer.echo("")
    typer.echo("tools: " + ", ".join(plain(t.name) for t in turn.tools))


@app.command("tool")
def tool(
    chat_id: str = typer.Argument(..., help="The chat's id."),
    name: str = typer.Argument(..., help="The tool: read_skill, read_skill_file, propose_plan or server__tool."),
    arguments: str = typer.Option("{}", "--args", help="The tool's arguments as a JSON object."),
    server: str | None = ServerOption,
    token: str | None = TokenOption,
    token_file: Path | None = TokenFileOption,
    as_json: bool = JsonFlag,
) -> None:
    """Run a chat tool as the model would; exits 1 when the result is an error."""
    try:
        parsed = json.loads(arguments)
    except json.JSONDecodeError as exc:
        raise InvalidRequestError(f"--args is not JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise InvalidRequestError(f"--args must be a JSON object of the tool's arguments, not {type(parsed).__name__}")
    with _client(server, token, token_file) as client:
        result = client.call_tool(chat_id, name, parsed)
    if as_json:
        _print_json(result)
    else:
        echo_exact(result.content)
    if result.is_error:
        raise typer.Exit(1)
