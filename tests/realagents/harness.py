"""Build workspaces, run the real agents on them (see ``driver.py``), and read what they sent.

A workspace is a folder holding ``home/`` (the agent's throwaway HOME) and ``w/`` (where
projects live). Each run gets its own copy of ``home`` so what an agent writes there
(Codex's system skills, Claude Code's settings) never leaks into another run; our scan
is given the same HOME afterwards, so paths and files agree byte for byte.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "node_modules" / ".bin"
DRIVER = Path(__file__).with_name("driver.py")
FACTS = Path(__file__).with_name("facts.json")

CLAUDE_SKILLS_HEADER = "The following skills are available for use with the Skill tool:\n\n"
CODEX_DOC_PREFIX = "# AGENTS.md instructions"
GEMINI_BUILTIN_DIR = ROOT / "node_modules" / "@google" / "gemini-cli" / "bundle" / "builtin"
# opencode-ai's bin is a placeholder its postinstall replaces (we install with --ignore-scripts): the platform binary
OPENCODE_BINARY = ROOT / "node_modules" / "opencode-linux-x64" / "bin" / "opencode"
OPENCODE_SKILLS_INTRO = (
    "\nSkills provide specialized instructions and workflows for specific tasks.\n"
    "Use the skill tool to load a skill when a task matches its description.\n"
)
_OPENCODE_SKILL = re.compile(r"  <skill>\n[\s\S]*?\n  </skill>")
_LOADED_CONTEXT = re.compile(r"<loaded_context>\n[\s\S]*?\n</loaded_context>")
_GEMINI_SKILL = re.compile(r"  <skill>\n[\s\S]*?\n  </skill>")


def facts() -> dict[str, Any]:
    """What the goldens were recorded against: versions, built-in skills, markers."""
    data: dict[str, Any] = json.loads(FACTS.read_text())
    return data


@dataclass(frozen=True)
class Workspace:
    """One case: files (text or bytes), symlinks (a target starting with ``/`` is in the workspace), empty dirs,
    where the agent starts."""

    name: str
    files: Mapping[str, str | bytes]
    cwd: str = "w/repo"
    links: Mapping[str, str] = field(default_factory=dict)
    dirs: Sequence[str] = ()
    agents: tuple[str, ...] = ("claude", "codex")
    read: str | None = None  # a file (relative to the workspace) the model reads in a second turn
    env: Mapping[str, str] = field(default_factory=dict)  # the agent's environment; ``{ws}``: the workspace folder

    def build(self, base: Path) -> Path:
        root = base / self.name
        for relative, content in self.files.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_bytes(content.encode("utf-8"))
        for relative in self.dirs:
            (root / relative).mkdir(parents=True, exist_ok=True)
        for relative, target in self.links.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            # "/w/x" names a path of this workspace, linked absolutely: each run's copy of home still reaches it
            path.symlink_to(f"{root}{target}" if target.startswith("/") else target)
        (root / "home").mkdir(parents=True, exist_ok=True)
        (root / self.cwd).mkdir(parents=True, exist_ok=True)
        return root


# how each agent's turn request is told apart: (path without the query, body) -> it is the turn
_TURN: dict[str, Callable[[str, Any], bool]] = {
    "opencode": lambda path, body: isinstance(body, dict) and bool(body.get("tools")),  # after the title request
    "copilot": lambda path, body: path.endswith("/chat/completions"),
    "gemini": lambda path, body: path.endswith(":streamGenerateContent"),  # after the router's generateContent
    "codex": lambda path, body: path.endswith("/responses"),
    "claude": lambda path, body: path.endswith("/messages") and isinstance(body, dict) and bool(body.get("stream")),
}


def skill(name: str | None = None, description: str | None = None, body: str = "Body line\n", extra: str = "") -> str:
    """A SKILL.md with these frontmatter fields (None leaves one out)."""
    fields = (f"name: {name}\n" if name is not None else "") + (
        f"description: {description}\n" if description is not None else ""
    )
    return f"---\n{fields}{extra}---\n{body}"


def import_chain(depth: int) -> dict[str, str | bytes]:
    """``w/repo/imp1.md`` importing ``imp2.md`` ... down to ``imp<depth>.md``."""
    files: dict[str, str | bytes] = {f"w/repo/imp{i}.md": f"level {i}\n@imp{i + 1}.md\n" for i in range(1, depth)}
    files[f"w/repo/imp{depth}.md"] = f"level {depth}\n"
    return files


@dataclass(frozen=True)
class Run:
    """What one agent sent for one workspace."""

    workspace: str
    agent: str
    cwd: str
    home: str
    exit: int
    stderr: str
    requests: tuple[dict[str, Any], ...]
    read: str | None = None  # the file the model read (absolute), in a two-turn run
    env: Mapping[str, str] = field(default_factory=dict)

    def model_request(self) -> dict[str, Any]:
        """The request carrying the turn (not a title, router or count request before it)."""
        turn = _TURN.get(self.agent, _TURN["claude"])
        for request in self.requests:
            body = request["body"]
            if request["method"] == "POST" and turn(request["path"].split("?")[0], body):
                return dict(body)
        raise AssertionError(f"{self.agent} sent no model request for {self.workspace}: {self.stderr[-800:]}")

    def after_read(self) -> dict[str, Any]:
        """The second turn's request: the one carrying the ``Read`` tool result."""
        if self.agent == "opencode":
            turns = [r["body"] for r in self.requests if isinstance(r["body"], dict) and r["body"].get("tools")]
            if len(turns) < 2:
                raise AssertionError(f"opencode sent no request after the read: {self.stderr[-800:]}")
            return dict(turns[1])
        for request in self.requests:
            body = request["body"]
            if request["method"] == "POST" and isinstance(body, dict) and body.get("stream") and _answered(body):
                return dict(body)
        raise AssertionError(f"{self.agent} sent no request after the Read for {self.workspace}: {self.stderr[-800:]}")

    def after_view(self) -> dict[str, Any]:
        """Copilot CLI's second request: the one carrying the ``view`` tool result."""
        for request in self.requests:
            body = request["body"]
            if isinstance(body, dict) and any(m.get("role") == "tool" for m in body.get("messages", [])):
                return dict(body)
        raise AssertionError(f"copilot sent no request after the view for {self.workspace}: {self.stderr[-800:]}")


def skip_unless_available() -> None:
    """Skip the calling test where the real agents cannot run; in CI (``AGENTCONTEXT_CI=1``, set by
    ``.ci/run``, which installs all they need) fail instead: there they must run, not skip quietly."""
    reason = unavailable()
    if reason is None:
        return
    if os.environ.get("AGENTCONTEXT_CI") == "1":
        pytest.fail(f"CI must run the real agents: {reason}")
    pytest.skip(reason)


def unavailable() -> str | None:
    """Why the real agents cannot run here, or None when they can."""
    for name in AGENTS:
        if not binary(name).exists():
            return (
                f"node_modules/.bin/{name} is missing: "
                "run scripts/bootstrap --dev (npm install) to install the real agents"
            )
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return "unshare or ip is not installed: the real agents run only in a loopback-only network namespace"
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, timeout=30)
    if probe.returncode != 0:
        return f"unshare -n is not permitted here ({probe.stderr.decode(errors='replace').strip()})"
    return None


AGENTS = ("codex", "claude", "gemini", "opencode", "copilot")


def binary(agent: str) -> Path:
    return OPENCODE_BINARY if agent == "opencode" else BIN / agent


def run_agents(cases: Sequence[tuple[Workspace, Path]], scratch: Path) -> dict[tuple[str, str], Run]:
    """Run every agent of every built workspace, concurrently, inside one fresh network namespace."""
    jobs: list[dict[str, Any]] = []
    for workspace, root in cases:
        for agent in workspace.agents:
            home = scratch / f"{workspace.name}-{agent}-home"
            shutil.copytree(root / "home", home, symlinks=True)
            env = {key: value.replace("{ws}", str(root)) for key, value in workspace.env.items()}
            if agent == "copilot":  # one unpack of its bundle for every run (driver.py unpacks it first)
                env["COPILOT_PKG_CACHE_HOME"] = str(scratch / "copilot-pkg")
            jobs.append(
                {
                    "id": f"{workspace.name}/{agent}",
                    "agent": agent,
                    "binary": str(binary(agent)),
                    "cwd": str(root / workspace.cwd),
                    "home": str(home),
                    **({"read": str(root / workspace.read)} if workspace.read else {}),
                    "env": env,
                }
            )
    job_file = scratch / "jobs.json"
    job_file.write_text(json.dumps(jobs))
    done = subprocess.run(
        ["unshare", "-n", sys.executable, str(DRIVER), str(job_file)],
        capture_output=True,
        timeout=600,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"},
    )
    if done.returncode != 0:
        raise AssertionError(
            f"the agent driver failed ({done.returncode}): {done.stdout[-2000:]!r} {done.stderr[-2000:]!r}"
        )
    output = json.loads(done.stdout)
    assert output["interfaces"] == ["lo"], output
    runs: dict[tuple[str, str], Run] = {}
    by_id = {job["id"]: job for job in jobs}
    for result in output["results"]:
        job = by_id[result["id"]]
        name = result["id"].rsplit("/", 1)[0]
        runs[(name, job["agent"])] = Run(
            name,
            job["agent"],
            job["cwd"],
            job["home"],
            result["exit"],
            result["stderr"],
            tuple(result["requests"]),
            job.get("read"),
            {k: v for k, v in job["env"].items() if k != "COPILOT_PKG_CACHE_HOME"},
        )
    return runs


# --- what the agents sent --------------------------------------------------------------------


def claude_reminder(body: Mapping[str, Any]) -> str | None:
    """The ``<system-reminder>`` block holding the instruction files, or None when none loaded."""
    first = body["messages"][0]
    for part in first["content"]:
        text = part.get("text", "")
        if text.startswith("<system-reminder>\nCodebase and user instructions"):
            return str(text)
    return None


def _answered(body: Mapping[str, Any]) -> bool:
    return any(_tool_result_at(message) is not None for message in body.get("messages", []))


def _tool_result_at(message: Mapping[str, Any]) -> int | None:
    content = message.get("content")
    if not isinstance(content, list):
        return None
    for index, part in enumerate(content):
        if part.get("type") == "tool_result":
            return index
    return None


def claude_on_read(body: Mapping[str, Any]) -> list[str]:
    """The text blocks Claude Code added after the ``Read`` result: the on-read instructions.

    The blocks after the tool result in its message, then the text of any message after
    it (the AGENTS.md fallback arrives as a hook's context in a message of its own).
    """
    messages = list(body["messages"])
    for at, message in enumerate(messages):
        index = _tool_result_at(message)
        if index is None:
            continue
        texts = [str(part["text"]) for part in message["content"][index + 1 :] if part.get("type") == "text"]
        for later in messages[at + 1 :]:
            content = later.get("content")
            if isinstance(content, str):
                texts.append(content)
            else:
                texts += [str(part["text"]) for part in content if part.get("type") == "text"]
        return texts
    raise AssertionError("no Read tool result in the request")


def claude_skill_lines(body: Mapping[str, Any], builtin: Sequence[str]) -> list[str]:
    """The ``- name: description`` lines of the Skill tool listing, built-in skills left out."""
    text = ""
    for message in body["messages"]:
        if message.get("role") != "system":
            continue
        for part in message["content"]:
            if CLAUDE_SKILLS_HEADER in part.get("text", ""):
                text = part["text"]
    if not text:
        return []
    block = text.split(CLAUDE_SKILLS_HEADER, 1)[1].split("\n\n", 1)[0]
    entries: list[str] = []
    for line in block.split("\n"):
        if line.startswith("- ") or not entries:
            entries.append(line)
        else:  # a description running over several lines
            entries[-1] += "\n" + line
    names = set(builtin)
    return [entry for entry in entries if _claude_name(entry) not in names]


def _claude_name(entry: str) -> str:
    return entry[2:].split(":", 1)[0]


def gemini_context(body: Mapping[str, Any]) -> str:
    """Every ``<loaded_context>`` block Gemini CLI sent, in request order (the system instruction's, then the
    first user message's), joined by one blank line; "" when it sent none."""
    system = "".join(str(part.get("text", "")) for part in body["systemInstruction"]["parts"])
    first = "".join(str(part.get("text", "")) for part in body["contents"][0]["parts"])
    return "\n\n".join([*_LOADED_CONTEXT.findall(system), *_LOADED_CONTEXT.findall(first)])


def gemini_skills(body: Mapping[str, Any]) -> str:
    """The ``<available_skills>`` block Gemini CLI sent, its built-in skills (those inside its bundle) left out."""
    system = "".join(str(part.get("text", "")) for part in body["systemInstruction"]["parts"])
    start = system.find("<available_skills>\n")
    if start == -1:
        return ""
    block = system[start : system.index("\n</available_skills>", start)]
    builtin = f"<location>{GEMINI_BUILTIN_DIR}/"
    kept = [entry for entry in _GEMINI_SKILL.findall(block) if builtin not in entry]
    return "<available_skills>\n" + "\n".join(kept) + "\n</available_skills>" if kept else ""


def gemini_skill_entries(listing: str) -> list[tuple[str, str]]:
    """Each ``<skill>`` entry of an ``<available_skills>`` block, with its name, in the block's order."""
    return [(re.findall(r"<name>(.*?)</name>", entry)[0], entry) for entry in _GEMINI_SKILL.findall(listing)]


def gemini_skill_names(body: Mapping[str, Any]) -> list[str]:
    """The names of every skill Gemini CLI listed, its built-ins included."""
    system = "".join(str(part.get("text", "")) for part in body["systemInstruction"]["parts"])
    names = re.compile(r"<name>(.*?)</name>")
    return [names.findall(entry)[0] for entry in _GEMINI_SKILL.findall(system)]


def codex_doc(body: Mapping[str, Any]) -> str | None:
    """The ``# AGENTS.md instructions for <cwd>`` text, or None when Codex sent none."""
    for item in body["input"]:
        if item.get("role") != "user":
            continue
        for part in item.get("content", []):
            if part.get("text", "").startswith(CODEX_DOC_PREFIX):
                return str(part["text"])
    return None


def codex_skills_block(body: Mapping[str, Any]) -> str | None:
    """The ``<skills_instructions>`` text, or None."""
    for item in body["input"]:
        if item.get("role") != "developer":
            continue
        for part in item.get("content", []):
            if part.get("text", "").startswith("<skills_instructions>"):
                return str(part["text"])
    return None


_CODEX_SKILL = re.compile(r"^- (?P<name>.*?): (?P<rest>.*) \(file: (?P<file>[^)]*)\)$")


def codex_skill_names(block: str | None) -> list[str]:
    if not block:
        return []
    return [m.group("name") for m in map(_CODEX_SKILL.match, block.split("\n")) if m]


def _opencode_system(body: Mapping[str, Any]) -> str:
    return "".join(str(m["content"]) for m in body["messages"] if m.get("role") == "system")


def opencode_instructions(body: Mapping[str, Any]) -> str:
    """OpenCode's instruction sections: from the first ``Instructions from: `` (right after its ``<env>``
    block) to the end of the last file's text, before its skills text; "" when it sent none."""
    system = _opencode_system(body)
    after = system.split("</env>\n", 1)[1]
    end = after.rfind(OPENCODE_SKILLS_INTRO)
    region = after[: end if end != -1 else len(after)]
    if not region.startswith("Instructions from: "):
        assert region == "" or end == -1, region[:200]
        return ""
    return region


def opencode_skills(body: Mapping[str, Any]) -> str:
    """The ``<available_skills>`` block OpenCode sent, its built-in (``<built-in>`` location) left out."""
    system = _opencode_system(body)
    start = system.rfind("<available_skills>\n")
    return _listed_skills(system, start, _OPENCODE_SKILL, "<location>&lt;built-in&gt;</location>")


def _listed_skills(system: str, start: int, entry: re.Pattern[str], builtin: str) -> str:
    """The ``<available_skills>`` block at ``start`` (-1: none) without the entries holding ``builtin``."""
    if start == -1:
        return ""
    block = system[start : system.index("\n</available_skills>", start)]
    kept = [found for found in entry.findall(block) if builtin not in found]
    return "<available_skills>\n" + "\n".join(kept) + "\n</available_skills>" if kept else ""


def opencode_skill_names(body: Mapping[str, Any]) -> list[str]:
    names = re.compile(r"<name>(.*?)</name>")
    return [names.findall(entry)[0] for entry in _OPENCODE_SKILL.findall(_opencode_system(body))]


def opencode_on_read(body: Mapping[str, Any]) -> list[str]:
    """What OpenCode added to the read's result after the file's own content ([] when nothing)."""
    for message in body["messages"]:
        if message.get("role") == "tool":
            content = str(message["content"])
            _, _, extra = content.partition("</content>\n\n")
            return [extra] if extra else []
    raise AssertionError("no tool result in the request")


def _copilot_system(body: Mapping[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(str(part.get("text", "")) for part in content)


def copilot_instructions(body: Mapping[str, Any]) -> str:
    """Copilot CLI's custom instructions: the region between its tool guidelines' ``</tools>`` and
    ``<system_notifications>``, without the region's own newlines (one before; one after, and one more
    when blocks are followed by other parts)."""
    system = _copilot_system(body)
    start = system.index("</tools>\n") + len("</tools>\n")
    region = system[start : system.index("<system_notifications>", start)]
    assert region.startswith("\n") and region.endswith("\n"), region[-200:]
    inner = region[1:-1]
    if inner.startswith("<custom_instruction>\n") and not inner.endswith("</custom_instruction>"):
        assert inner.endswith("\n"), inner[-200:]
        inner = inner[:-1]
    return inner


_COPILOT_SKILL = re.compile(r"<skill>\n  <name>[\s\S]*?</location>\n</skill>")


def copilot_skills(body: Mapping[str, Any]) -> str:
    """The ``<available_skills>`` block Copilot CLI sent, its built-in skills left out."""
    system = _copilot_system(body)
    return _listed_skills(system, system.find("<available_skills>\n"), _COPILOT_SKILL, "<location>builtin</location>")


def copilot_builtin_skills(body: Mapping[str, Any]) -> list[str]:
    """The names of Copilot CLI's built-in skills it listed."""
    system = _copilot_system(body)
    names = re.compile(r"<name>(.*?)</name>")
    return [names.findall(e)[0] for e in _COPILOT_SKILL.findall(system) if "<location>builtin</location>" in e]


def copilot_on_read(body: Mapping[str, Any]) -> str | None:
    """The user message Copilot CLI added after the ``view`` result (its reminders), or None."""
    messages = list(body["messages"])
    for at, message in enumerate(messages):
        if message.get("role") == "tool":
            later = [m for m in messages[at + 1 :] if m.get("role") == "user"]
            return str(later[0]["content"]) if later else None
    raise AssertionError("no view tool result in the request")
