"""Text no database stores, put in front of the scan by a repository: files holding NUL bytes (a UTF-16 file
written by a Windows shell, a binary renamed), a ``\u0000`` in a skill's YAML, names that are not UTF-8. Every
profile lists each one with what its agent would do, and none crashes the scan or keeps the workspace from syncing.

PostgreSQL refuses a NUL in text and no database holds a lone surrogate (how Python lists a name's bytes that are
not UTF-8), so the control plane's contract refuses both (``wire.sync.storable``): a snapshot holding one would
never be pushed, and the chats of that workspace would keep what they had, silently. Gemini CLI, Copilot CLI and
OpenCode send a NUL-holding file as text; the scan lists it ``invalid`` with that said, as it does for Claude Code.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentcontext import storable
from agentcontext.agent.watcher import _describe
from agentcontext.resource import Status
from agentcontext.scan import Scanner
from agentcontext.settings.profiles import PROFILES
from agentcontext.testing import isolated_environ, make_workspace, scan_tree, skill_md, test_config
from agentcontext.wire.sync import PushRequest, fitted, validated
from agentcontext.workspace_mcp.config import parse
from tests.attacks.test_tool_descriptions import RUGPULL, served

NUL = b"rules\x00 with a NUL\n"
UTF16 = "Use tabs.\n".encode("utf-16")  # what PowerShell's `>` writes: a BOM, then two bytes a character
UTF16_NUL = "Use\x00tabs.\n".encode("utf-16")  # U+0000 itself, encoded
GIT = {".git/HEAD": "ref: refs/heads/main\n", ".git/objects/": "", ".git/refs/": ""}
NAMED = (
    "AGENTS.md", "CLAUDE.md", "GEMINI.md", "AGENTS.override.md", "CLAUDE.local.md", ".cursorrules",
    ".github/copilot-instructions.md", ".github/instructions/x.instructions.md", ".claude/rules/r.md",
    ".cursor/rules/r.mdc", ".claude/commands/c.md",
)  # fmt: skip
SKILL = skill_md("nul-skill", "a skill") + "\x00 in its body\n"
SKILLS = (".agents/skills", ".claude/skills", ".github/skills", ".gemini/skills", ".opencode/skills", ".cursor/skills")


def hostile(root: Path, body: bytes) -> Path:
    files: dict[str, str | bytes] = {**GIT, **dict.fromkeys(NAMED, body), ".mcp.json": b'{"mcpServers": {}}\x00'}
    files |= {f"{container}/nul-skill/SKILL.md": SKILL.encode() for container in SKILLS}
    return make_workspace(root, files)


def imported(root: Path) -> Path:
    """Clean files that import one holding a NUL (Claude Code's, Gemini CLI's and Copilot CLI's ``@`` imports)."""
    files: dict[str, str | bytes] = {**GIT, "notes.md": NUL}
    files |= dict.fromkeys(("AGENTS.md", "CLAUDE.md", "GEMINI.md"), "See @notes.md\n")
    return make_workspace(root, files)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("body", [NUL, UTF16, UTF16_NUL], ids=["nul", "utf16", "utf16-nul"])
def test_files_holding_nul_bytes_are_each_listed_and_never_keep_the_snapshot_from_being_pushed(
    tmp_path: Path, home: Path, profile: str, body: bytes
) -> None:
    for work, held in ((hostile(tmp_path / "all", body), NAMED), (imported(tmp_path / "imports"), ("notes.md",))):
        snapshot = scan_tree(work, home=home, profile=profile).snapshot
        validated(PushRequest, {**snapshot.to_dict(), "initial": True, "agent": {}})  # raises ContractError
        for resource in snapshot.resources:
            assert "\x00" not in (resource.content or ""), resource.path
            if resource.status is Status.OK and resource.path.endswith(held):  # decoded from UTF-16, and said
                assert body is UTF16 and "UTF-16" in " ".join(resource.warnings), (resource.path, resource.warnings)


NOT_UTF8 = (
    b".agents/skills/bad\xff/SKILL.md", b".claude/skills/bad\xff/SKILL.md", b".github/skills/bad\xff/SKILL.md",
    b".claude/rules/r\xff.md", b".github/instructions/r\xff.instructions.md", b".cursor/rules/r\xff.mdc",
    b".claude/commands/c\xff.md", b"sub\xff/AGENTS.md",
)  # fmt: skip


@pytest.mark.parametrize("profile", PROFILES)
def test_names_that_are_not_utf8_are_listed_escaped_and_neither_crash_the_scan_nor_block_the_push(
    tmp_path: Path, home: Path, profile: str
) -> None:
    work = make_workspace(tmp_path / "w", {**GIT, "AGENTS.md": "rules\n", "GEMINI.md": "rules\n"})
    for relative in NOT_UTF8:
        path = os.path.join(bytes(work), relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as out:
            out.write(skill_md("bad-ff", "a name that is not UTF-8").encode())
    snapshot = scan_tree(work, home=home, profile=profile).snapshot
    validated(PushRequest, {**snapshot.to_dict(), "initial": True, "agent": {}})
    odd = [r for r in snapshot.resources if "\\xff" in r.path]
    assert odd, "each profile meets at least one of them"
    for resource in odd:
        assert resource.status is Status.INVALID and "its path is not UTF-8" in str(resource.error), resource
    assert {r.status for r in snapshot.resources if r.path.endswith(("/AGENTS.md", "/GEMINI.md"))} >= {Status.OK}


NUL_TOOLS: list[dict[str, Any]] = [
    {"name": "fine", "description": "Says \\u0000 as six characters: kept.", "inputSchema": {"type": "object"}},
    {"name": "nul-description", "description": "Reads.\x00", "inputSchema": {"type": "object"}},
    {"name": "nul-schema", "description": "Writes.", "inputSchema": {"type": "object", "enum": ["a\x00"]}},
    {"name": "nul\x00name", "description": "Named.", "inputSchema": {"type": "object"}},
]


@pytest.mark.anyio
async def test_a_servers_tools_holding_nul_are_not_offered_and_its_resource_stays_storable(
    tmp_path: Path, home: Path
) -> None:
    """A server that lies: JSON carries ``\\u0000`` into a tool's name, description or schema. Such a tool is not
    offered (said in a warning), so the server's resource, pushed with every snapshot, stays one a database takes."""
    work = tmp_path / "work"
    work.mkdir()
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(NUL_TOOLS), encoding="utf-8")
    text = json.dumps({"mcpServers": {"liar": {"command": sys.executable, "args": [str(RUGPULL), str(tools)]}}})
    (work / ".mcp.json").write_text(text, encoding="utf-8")
    [spec] = parse(text.encode(), str(work / ".mcp.json"), {}).servers
    resource = await served(spec, work, home)
    assert sorted(t.name for t in resource.tools) == ["fine", "poke"]  # poke: the test server's own
    for name in ("nul-description", "nul-schema", "nul\\x00name"):
        assert f'tool "{name}": not offered: its definition holds a NUL character (\\u0000)' in resource.warnings
    assert storable.problem(json.dumps(resource.to_dict(), ensure_ascii=False)) is None


DEEP = "/".join(["d" * 200] * 5)  # 1,000 bytes of folders: a file below is past the 1,024 bytes a path may hold
GLOBS = "".join(f"  - 'src/g{i}/**'\n" for i in range(100))
LONG_NAME = f"---\nname: {'n' * 5000}\ndescription: d\n---\n"
PAST_THE_SIZES = {
    **GIT, "AGENTS.md": "x\n", "CLAUDE.md": "x\n", "GEMINI.md": "x\n",
    f"{DEEP}/AGENTS.md": "deep\n", f"{DEEP}/CLAUDE.md": "deep\n", f"{DEEP}/GEMINI.md": "deep\n",
    f".agents/skills/{DEEP}/SKILL.md": skill_md("deep-skill"),
    **{f"{container}/longname/SKILL.md": LONG_NAME for container in SKILLS},
    ".claude/rules/many.md": f"---\npaths:\n{GLOBS}---\nrule\n",
    ".github/instructions/many.instructions.md": f"---\napplyTo: \"{','.join(f'g{i}/**' for i in range(100))}\"\n---\n",
    ".cursor/rules/many.mdc": f"---\nglobs: {','.join(f'g{i}/**' for i in range(100))}\n---\nx\n",
    ".agents/skills/badyaml/SKILL.md": f"---\nname: badyaml\ndescription: [{'x' * 6000}\n---\n",
    f".claude/commands/{'c' * 250}.md": "x\n",
}  # fmt: skip


@pytest.mark.parametrize("profile", PROFILES)
def test_what_is_past_the_sizes_a_snapshot_holds_is_said_and_never_blocks_the_push(
    tmp_path: Path, home: Path, profile: str
) -> None:
    """Paths past 1,024 bytes, names and our own reasons past 4,096 (a 5,000-character skill name quoted in an
    error), a rule of 100 globs: each once refused the whole push."""
    work = make_workspace(tmp_path / "w", PAST_THE_SIZES)
    snapshot = scan_tree(work, home=home, profile=profile).snapshot
    validated(PushRequest, {**snapshot.to_dict(), "initial": True, "agent": {}})
    for resource in snapshot.resources:
        if "longname" in resource.path or "d" * 200 in resource.path:
            assert resource.status is Status.INVALID, resource
    rules = [r for r in snapshot.resources if "many." in r.path]
    assert all(r.status is Status.OK for r in rules), rules  # 100 globs are a rule like any other


def test_a_broken_watch_that_quotes_a_long_path_that_is_not_utf8_is_said_and_never_blocks_the_push(
    tmp_path: Path, home: Path
) -> None:
    """The watcher's error goes into the snapshot as the exception said it: any path (its bytes surrogate-escaped),
    at any length; the control plane refuses a NUL, a lone surrogate or more than 4,096 bytes in it."""
    work = make_workspace(tmp_path / "w", {**GIT, "AGENTS.md": "rules\n"})
    folder = os.fsdecode(bytes(work) + b"/" + b"deep\xff/" * 1_000)
    error = _describe(OSError(28, f"No space left on device\x00 watching {folder}"))
    config = test_config(work, home=home)
    snapshot = Scanner(work, config, environ=isolated_environ(home)).run(version=1, error=error).snapshot
    validated(PushRequest, {**snapshot.to_dict(), "initial": True, "agent": {}})  # raises ContractError
    assert snapshot.error is not None and snapshot.error.startswith("inotify watch limit exceeded")
    quoted = "file watching failed: " + "\udcff" * 5_000
    snapshot = Scanner(work, config, environ=isolated_environ(home)).run(version=1, error=quoted).snapshot
    validated(PushRequest, {**snapshot.to_dict(), "initial": True, "agent": {}})
    said = str(snapshot.error)
    assert said.startswith("file watching failed: \\xff\\xff"), said[:60]  # the bytes shown
    assert len(said.encode()) <= storable.MAX_TEXT_BYTES


CONTROL = "\x01" * 60_000 + "\n"  # 60 KB on disk, 360 KB as JSON (each one escaped \u0001)
SWOLLEN = {
    **GIT, "AGENTS.md": CONTROL, "CLAUDE.md": CONTROL, "GEMINI.md": CONTROL,
    **{f"{container}/c/SKILL.md": skill_md("c") + CONTROL for container in SKILLS},
    **{f"d{i}/AGENTS.md": "\n" * 60_000 for i in range(40)},  # newlines: twice their bytes as JSON
    **{f".agents/skills/q{i}/SKILL.md": skill_md(f"q{i}") + '"' * 60_000 for i in range(40)},
}  # fmt: skip


@pytest.mark.parametrize("profile", PROFILES)
def test_texts_that_swell_as_json_are_pushed_without_their_text_never_refusing_the_push(
    tmp_path: Path, home: Path, profile: str
) -> None:
    """The caps count a text's bytes; JSON writes a control character in six and a newline or quote in two, so a
    snapshot within its caps could be over the 256 KiB a resource and the 4 MiB a push may take, and was refused
    whole. The push (``wire.sync.fitted``, what the agent sends) leaves such texts out, each said."""
    snapshot = scan_tree(make_workspace(tmp_path / "w", SWOLLEN), home=home, profile=profile).snapshot
    pushed = fitted(snapshot)
    validated(PushRequest, {**pushed.to_dict(), "initial": True, "agent": {}})
    swollen = [r for r in pushed.resources if "of a push holds" in str(r.error) or "one push holds" in str(r.error)]
    assert swollen and all(r.status is Status.EXCLUDED and r.content is None for r in swollen)
    assert len(pushed.resources) == len(snapshot.resources)  # listed, every one


_WHERE = (
    b"AGENTS.md", b"CLAUDE.md", b"GEMINI.md", b"AGENTS.override.md", b".cursorrules", b"notes.md",
    b".github/copilot-instructions.md", b".claude/rules/r.md", b".github/instructions/i.instructions.md",
    b".cursor/rules/r.mdc", b".claude/commands/c.md", b"sub/AGENTS.md", b"sub/CLAUDE.md", b".mcp.json",
    b".agents/skills/s/SKILL.md", b".claude/skills/s/SKILL.md", b".github/skills/s/SKILL.md",
    b".gemini/skills/s/SKILL.md", b".opencode/skills/s/SKILL.md", b".cursor/skills/s/SKILL.md",
)  # fmt: skip
_ODD = ("\x00", "\x01", "\ud800", "\u202e", "\u200b", "\U000e0041", "\ufeff", "\r", '"', "\\", "é", "💥", "\x85")
_YAML_ESCAPES = ("\\0", "\\x01", "\\ud800", "\\u202e", "\\u200b", "\\U000e0041", "\\ufeff", "\\r", "\\N", "\\\\")
_PIECES = [*_ODD, "a", " ", "\n", "@notes.md", "@AGENTS.md", "#", ":", "-", "---\n"]
_TEXTS = st.one_of(
    st.binary(max_size=300),
    st.lists(st.sampled_from(_PIECES), max_size=60).map(lambda parts: "".join(parts).encode("utf-8", "surrogatepass")),
    st.tuples(
        st.sampled_from(["name", "description", "paths", "globs", "applyTo"]), st.sampled_from(_YAML_ESCAPES)
    ).map(lambda pair: f'---\nname: s\ndescription: d\n{pair[0]}: "a{pair[1]}"\n---\nbody @notes.md\n'.encode()),
    st.sampled_from(["many NUL lines", "50 KB of control characters"]),
)
_BIG = {
    "many NUL lines": "".join(f"{'x' * 90}\x00\n" for _ in range(800)).encode(),
    "50 KB of control characters": ("\x02" * 50_000).encode(),
}
_NAMES = st.sampled_from([b"", b"\xff", b"\xc3", b" ", b"\x1b[31m", b"x" * 200])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.dictionaries(st.tuples(st.sampled_from(_WHERE), _NAMES), _TEXTS, min_size=1, max_size=12))
def test_whatever_a_repository_holds_every_profile_scans_it_and_the_push_is_one_the_control_plane_takes(
    tmp_path_factory: pytest.TempPathFactory, home: Path, files: dict[tuple[bytes, bytes], bytes | str]
) -> None:
    work = tmp_path_factory.mktemp("w")
    os.makedirs(work / ".git" / "objects")
    (work / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    for (where, odd), body in files.items():
        head, _, name = where.rpartition(b"/")
        path = os.path.join(bytes(work), head + odd if head else b"", odd + name if not head else name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as out:
            out.write(_BIG[body] if isinstance(body, str) else body)
    for profile in PROFILES:
        snapshot = scan_tree(work, home=home, profile=profile).snapshot
        validated(PushRequest, {**fitted(snapshot).to_dict(), "initial": True, "agent": {}})
