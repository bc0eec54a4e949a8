"""Skills as MCP resources and prompts, and the SEP-2640 ``skills/list`` and ``skills/get`` methods.

Everything goes through the official SDK client in memory; the custom SEP-2640 methods are
sent with ``ClientSession.send_request`` and request models of our own.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import mcp.types as types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.client import Client
from mcp.shared.exceptions import MCPError

from agentcontext.mcp.server import ContextServer
from agentcontext.mcp.workspace import Workspace
from agentcontext.skills.extension import EXTENSION_ID
from agentcontext.testing import isolated_environ, make_workspace, skill_md, test_config

pytestmark = pytest.mark.anyio

MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])
SKILLS = ".agents/skills"
DEPLOY = skill_md("deploy", "Ship a release", body="\nStep one.\n")
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"


def serve(work_dir: Path, home: Path, settings: Mapping[str, Any] | None = None) -> ContextServer:
    config = test_config(work_dir, home=home, settings=settings)
    return ContextServer(Workspace(str(work_dir), config=config, environ=isolated_environ(home)))


def deploy_project(root: Path, extra: Mapping[str, str | bytes] | None = None) -> Path:
    """A project with the skill ``deploy``: SKILL.md, a script, a reference, an image and hidden files."""
    return make_workspace(
        root,
        {
            ".git/": "",
            f"{SKILLS}/deploy/SKILL.md": DEPLOY,
            f"{SKILLS}/deploy/scripts/release.txt": "echo hi\r\n",
            f"{SKILLS}/deploy/references/api.md": "# API\n",
            f"{SKILLS}/deploy/logo.png": PNG,
            f"{SKILLS}/deploy/.git/config": "[core]",
            f"{SKILLS}/deploy/.env": "TOKEN=1",
            "secret.txt": "no-such-luck",
            **(extra or {}),
        },
    )


def skill_file(root: Path, relative: str) -> Path:
    return root / SKILLS / "deploy" / relative


# resources


@MODES
async def test_every_file_of_an_offered_skill_is_a_resource_with_its_size(
    tmp_path: Path, home: Path, mode: str
) -> None:
    deploy_project(tmp_path)
    (skill_file(tmp_path, "outside.txt")).symlink_to(tmp_path / "secret.txt")
    async with Client(serve(tmp_path, home), mode=mode) as client:
        resources = (await client.list_resources()).resources
    listed = {r.uri: (r.size, r.mime_type) for r in resources}
    assert listed == {
        "skill://deploy/SKILL.md": (len(DEPLOY.encode()), "text/markdown"),
        "skill://deploy/logo.png": (len(PNG), "image/png"),
        "skill://deploy/references/api.md": (len(b"# API\n"), "text/markdown"),
        "skill://deploy/scripts/release.txt": (len(b"echo hi\r\n"), "text/plain"),
    }
    (meta,) = [r for r in resources if r.uri == "skill://deploy/SKILL.md"]
    assert (meta.name, meta.description) == ("deploy/SKILL.md", "Ship a release")


async def test_the_resource_template_names_the_skill_uri_scheme(tmp_path: Path, home: Path) -> None:
    deploy_project(tmp_path)
    async with Client(serve(tmp_path, home), mode="legacy") as client:
        templates = (await client.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["skill://{skill}/{path}"]


async def test_skills_that_are_not_offered_have_no_resources(tmp_path: Path, home: Path) -> None:
    deploy_project(tmp_path, {f"{SKILLS}/broken/SKILL.md": "---\nname: broken\n---\n", f"{SKILLS}/broken/x.txt": "x"})
    async with Client(serve(tmp_path, home), mode="legacy") as client:
        uris = [r.uri for r in (await client.list_resources()).resources]
        with pytest.raises(MCPError) as caught:
            await client.read_resource("skill://broken/SKILL.md")
    assert not [uri for uri in uris if uri.startswith("skill://broken/")]
    assert caught.value.error.message == "Unknown resource: skill://broken/SKILL.md"


@MODES
async def test_read_resource_returns_the_exact_bytes_text_or_base64(tmp_path: Path, home: Path, mode: str) -> None:
    deploy_project(tmp_path)
    async with Client(serve(tmp_path, home), mode=mode) as client:
        script = (await client.read_resource("skill://deploy/scripts/release.txt")).contents
        image = (await client.read_resource("skill://deploy/logo.png")).contents
        meta = (await client.read_resource("skill://deploy/SKILL.md")).contents
    assert len(script) == len(image) == len(meta) == 1
    assert isinstance(script[0], types.TextResourceContents)
    assert script[0].text == "echo hi\r\n"  # as on disk: no line-end normalising, so digests verify
    assert isinstance(image[0], types.BlobResourceContents)
    assert base64.b64decode(image[0].blob) == PNG
    assert image[0].mime_type == "image/png"
    assert isinstance(meta[0], types.TextResourceContents)
    assert (meta[0].text, meta[0].mime_type) == (DEPLOY, "text/markdown")


async def test_percent_escaped_names_round_trip(tmp_path: Path, home: Path) -> None:
    deploy_project(tmp_path, {f"{SKILLS}/deploy/notes and 100%.md": "spaced"})
    async with Client(serve(tmp_path, home), mode="legacy") as client:
        uris = [r.uri for r in (await client.list_resources()).resources]
        assert "skill://deploy/notes%20and%20100%25.md" in uris
        contents = (await client.read_resource("skill://deploy/notes%20and%20100%25.md")).contents
    assert isinstance(contents[0], types.TextResourceContents)
    assert contents[0].text == "spaced"


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("skill://deploy/../../etc/passwd", "Resource must be a path inside the skill: ../../etc/passwd"),
        (
            "skill://deploy/%2e%2e/%2e%2e/%2e%2e/secret.txt",
            "Resource must be a path inside the skill: ../../../secret.txt",
        ),
        ("skill://deploy/%2Fetc%2Fpasswd", "Resource must be a path inside the skill: /etc/passwd"),
        ("skill://deploy/.git/config", "Resource must be a path inside the skill: .git/config"),
        ("skill://deploy/.env", "Resource must be a path inside the skill: .env"),
        ("skill://deploy/a%00b", "Resource must be a path inside the skill: a\0b"),
        ("skill://deploy/missing.md", "Unknown resource: skill://deploy/missing.md"),
        ("skill://deploy/scripts", "Unknown resource: skill://deploy/scripts"),
        ("skill://nope/SKILL.md", "Unknown resource: skill://nope/SKILL.md"),
        ("file:///etc/passwd", "Unknown resource: file:///etc/passwd"),
    ],
)
async def test_read_resource_refuses_anything_but_a_listed_file(
    tmp_path: Path, home: Path, uri: str, message: str
) -> None:
    deploy_project(tmp_path)
    async with Client(serve(tmp_path, home), mode="legacy") as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri)
        still = await client.read_resource("skill://deploy/SKILL.md")
    assert (caught.value.error.code, caught.value.error.message) == (types.INVALID_PARAMS, message)
    assert still.contents


_URI_PIECES = st.sampled_from(["..", "%2e", "%2E%2e", "/", "%2f", "\\", "%00", "secret.txt", ".env", "scripts", "~"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tail=st.lists(_URI_PIECES | st.text(max_size=3), max_size=8).map("".join))
async def test_a_hostile_resource_uri_is_refused_or_served_from_inside_the_skill(
    tmp_path: Path, home: Path, tail: str
) -> None:
    if not (tmp_path / ".git").exists():
        deploy_project(tmp_path)
    async with Client(serve(tmp_path, home), mode="legacy") as client:
        try:
            result = await client.read_resource("skill://deploy/" + tail)
        except MCPError as exc:
            assert exc.error.code == types.INVALID_PARAMS
            return
    for contents in result.contents:
        assert isinstance(contents, types.TextResourceContents | types.BlobResourceContents)
        data = contents.text.encode() if isinstance(contents, types.TextResourceContents) else b""
        assert b"no-such-luck" not in data and b"TOKEN" not in data


# prompts


@MODES
async def test_every_offered_skill_is_a_prompt_with_its_body(tmp_path: Path, home: Path, mode: str) -> None:
    deploy_project(
        tmp_path, {f"{SKILLS}/broken/SKILL.md": "no frontmatter\n", f"{SKILLS}/lint/SKILL.md": skill_md("lint")}
    )
    async with Client(serve(tmp_path, home), mode=mode) as client:
        prompts = (await client.list_prompts()).prompts
        result = await client.get_prompt("deploy")
    assert [(p.name, p.description) for p in prompts] == [("deploy", "Ship a release"), ("lint", "does a thing")]
    assert result.description == "Ship a release"
    (message,) = result.messages
    assert message.role == "user"
    assert isinstance(message.content, types.TextContent)
    folder = skill_file(tmp_path, "")
    assert message.content.text == "\n".join(
        [
            '<skill_content name="deploy">',
            "Step one.",
            "",
            f"Skill directory: {str(folder).rstrip('/')}",
            "Relative paths in this skill are relative to the skill directory.",
            "<skill_resources>",
            "<file>logo.png</file>",
            "<file>references/api.md</file>",
            "<file>scripts/release.txt</file>",
            "</skill_resources>",
            "</skill_content>",
        ]
    )


async def test_an_unknown_prompt_is_an_invalid_params_error_naming_the_skills(tmp_path: Path, home: Path) -> None:
    deploy_project(tmp_path)
    async with Client(serve(tmp_path, home), mode="legacy") as client:
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("nope")
    assert (caught.value.error.code, caught.value.error.message) == (
        types.INVALID_PARAMS,
        "No skill named nope. Available: deploy.",
    )


# SEP-2640: skills/list and skills/get


class SkillsListRequest(types.Request[types.RequestParams | None, Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"
    params: types.RequestParams | None = None


class SkillsGetParams(types.RequestParams):
    uri: str


class SkillsGetRequest(types.Request[SkillsGetParams, Literal["skills/get"]]):
    method: Literal["skills/get"] = "skills/get"


class SkillsListResult(types.Result):
    skills: list[dict[str, Any]]
    ttl_ms: int
    cache_scope: str


class SkillsGetResult(types.Result):
    skill: dict[str, Any]
    ttl_ms: int
    cache_scope: str


async def skills_list(client: Client) -> SkillsListResult:
    return await client.session.send_request(SkillsListRequest(), SkillsListResult)


async def skills_get(client: Client, uri: str) -> SkillsGetResult:
    return await client.session.send_request(SkillsGetRequest(params=SkillsGetParams(uri=uri)), SkillsGetResult)


def digest(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


@MODES
async def test_skills_list_entries_carry_frontmatter_and_every_file_with_its_digest(
    tmp_path: Path, home: Path, mode: str
) -> None:
    text = skill_md("deploy", "Ship a release", body="\nStep one.\n", created="2024-01-02", version="3")
    deploy_project(tmp_path, {f"{SKILLS}/deploy/SKILL.md": text})
    async with Client(serve(tmp_path, home), mode=mode) as client:
        listed = await skills_list(client)
    assert (listed.ttl_ms, listed.cache_scope) == (0, "private")
    (entry,) = listed.skills
    assert entry["uri"] == "skill://deploy/SKILL.md"
    assert entry["frontmatter"] == {
        "name": "deploy",
        "description": "Ship a release",
        "created": "2024-01-02",
        "version": 3,
    }
    files = {
        "skill://deploy/SKILL.md": ("SKILL.md", "text/markdown"),
        "skill://deploy/logo.png": ("logo.png", "image/png"),
        "skill://deploy/references/api.md": ("references/api.md", "text/markdown"),
        "skill://deploy/scripts/release.txt": ("scripts/release.txt", "text/plain"),
    }
    expected = [
        {
            "uri": uri,
            "digest": digest(skill_file(tmp_path, relative)),
            "size": skill_file(tmp_path, relative).stat().st_size,
            "mimeType": mime,
        }
        for uri, (relative, mime) in files.items()
    ]
    assert entry["resources"] == expected


@MODES
async def test_skills_get_returns_the_same_entry_and_what_it_lists_verifies(
    tmp_path: Path, home: Path, mode: str
) -> None:
    deploy_project(tmp_path)
    async with Client(serve(tmp_path, home), mode=mode) as client:
        (listed,) = (await skills_list(client)).skills
        got = await skills_get(client, "skill://deploy/SKILL.md")
        served: dict[str, bytes] = {}
        for item in got.skill["resources"]:
            (contents,) = (await client.read_resource(item["uri"])).contents
            if isinstance(contents, types.TextResourceContents):
                served[item["uri"]] = contents.text.encode("utf-8")
            else:
                assert isinstance(contents, types.BlobResourceContents)
                served[item["uri"]] = base64.b64decode(contents.blob)
    assert got.skill == listed
    for item in got.skill["resources"]:
        data = served[item["uri"]]
        assert ("sha256:" + hashlib.sha256(data).hexdigest(), len(data)) == (item["digest"], item["size"])


async def test_a_plugin_skill_lives_under_its_plugin_path(tmp_path: Path, home: Path) -> None:
    deploy_project(tmp_path)
    skill_dir = home / ".claude/plugins/cache/market/plug/1.0.0/skills/helper"
    make_workspace(skill_dir, {"SKILL.md": skill_md("helper", "Helps"), "ref.txt": "r"})
    async with Client(serve(tmp_path, home), mode="legacy") as client:
        entries = {entry["uri"]: entry for entry in (await skills_list(client)).skills}
        contents = (await client.read_resource("skill://plug/helper/ref.txt")).contents
    entry = entries["skill://plug/helper/SKILL.md"]
    assert entry["frontmatter"]["name"] == "helper"
    assert [r["uri"] for r in entry["resources"]] == ["skill://plug/helper/SKILL.md", "skill://plug/helper/ref.txt"]
    assert isinstance(contents[0], types.TextResourceContents)
    assert contents[0].text == "r"


async def test_a_skill_whose_yaml_needed_repair_is_offered_but_not_served_by_the_extension(
    tmp_path: Path, home: Path
) -> None:
    repaired = "---\nname: fixme\ndescription: Use when: deploying\n---\nBody.\n"
    deploy_project(tmp_path, {f"{SKILLS}/fixme/SKILL.md": repaired})
    async with Client(serve(tmp_path, home), mode="auto") as client:
        uris = [entry["uri"] for entry in (await skills_list(client)).skills]
        with pytest.raises(MCPError) as caught:
            await skills_get(client, "skill://fixme/SKILL.md")
        tool = await client.call_tool("skills_list", {})
    assert uris == ["skill://deploy/SKILL.md"]
    assert caught.value.error.message == (
        "skill://fixme/SKILL.md: its frontmatter is not valid YAML as written, so it cannot be verified"
    )
    assert tool.structured_content is not None
    assert [s["name"] for s in tool.structured_content["skills"]] == ["deploy", "fixme"]


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("skill://deploy/references/api.md", "Not a skill's SKILL.md: skill://deploy/references/api.md"),
        ("skill://nope/SKILL.md", "Unknown resource: skill://nope/SKILL.md"),
        ("skill://deploy/../other/SKILL.md", "Resource must be a path inside the skill: ../other/SKILL.md"),
    ],
)
async def test_skills_get_refuses_anything_but_an_offered_skill_md(
    tmp_path: Path, home: Path, uri: str, message: str
) -> None:
    deploy_project(tmp_path)
    async with Client(serve(tmp_path, home), mode="auto") as client:
        with pytest.raises(MCPError) as caught:
            await skills_get(client, uri)
    assert (caught.value.error.code, caught.value.error.message) == (types.INVALID_PARAMS, message)


async def test_the_server_announces_the_skills_extension(tmp_path: Path, home: Path) -> None:
    deploy_project(tmp_path)
    server = serve(tmp_path, home)
    assert EXTENSION_ID in server.extensions
    async with Client(server, mode="auto") as client:  # server/discover, the 2026 era
        capabilities = client.server_capabilities.model_dump(by_alias=True, exclude_none=True)
    assert EXTENSION_ID in capabilities.get("extensions", {})
    async with Client(server, mode="legacy") as client:  # initialize: no ``extensions`` in the 2025 schema
        capabilities = client.server_capabilities.model_dump(by_alias=True, exclude_none=True)
        listed = await skills_list(client)
    assert EXTENSION_ID in capabilities.get("experimental", {})
    assert listed.skills  # and what it declares is served


async def test_with_skills_disabled_nothing_is_listed_anywhere(tmp_path: Path, home: Path) -> None:
    deploy_project(tmp_path)
    async with Client(serve(tmp_path, home, {"skills.enabled": False}), mode="auto") as client:
        assert (await skills_list(client)).skills == []
        assert (await client.list_resources()).resources == []
        assert (await client.list_prompts()).prompts == []
