"""Our ``codex``, ``claude``, ``gemini``, ``opencode`` and ``copilot`` profiles against the real binaries, exactly.

Every workspace of ``cases.py`` is run through the real Codex, Claude Code or Gemini CLI (pinned in
package.json), inside a network namespace with loopback alone, against a fake model API
that records what they send. Our renderers must produce the same bytes for the same
work dir and HOME. ``facts.json`` names the versions the expectations come from: a failure
after a version bump says which agent moved and which fact (doc or skills) changed.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator, Mapping, Sequence

import pytest

from agentcontext import peers
from agentcontext.peers.claude import nested as claude_nested
from agentcontext.peers.claude.doc import claude_reminder
from agentcontext.peers.claude.skills import claude_skill_lines
from agentcontext.peers.codex.render import Budget, codex_instructions, codex_skills_block
from agentcontext.peers.copilot.skills import COPILOT_BUILTIN_SKILLS, copilot_skills_xml
from agentcontext.peers.gemini.skills import gemini_skills_xml
from agentcontext.peers.opencode.skills import opencode_skills_xml
from agentcontext.resource import Kind, Resource, Status
from agentcontext.scan import Scanner, ScanResult, scan_full, skill_roots
from agentcontext.settings.config import load_config
from agentcontext.skills.discovery import root_of
from tests.realagents import harness
from tests.realagents.cases import CASES

pytestmark = pytest.mark.timeout(600)  # one fixture runs every agent on every workspace


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[str, str], harness.Run]]:
    harness.skip_unless_available()
    base = tmp_path_factory.mktemp("realagents")
    built = [(case, case.build(base / "cases")) for case in CASES]
    scratch = base / "runs"
    scratch.mkdir()
    yield harness.run_agents(built, scratch)


def _ours(run: harness.Run) -> ScanResult:
    environ = {"HOME": run.home, **run.env}
    config = load_config(run.cwd, environ=environ, overrides={"profile": run.agent})
    return scan_full(run.cwd, config, environ=environ)


def _moved(agent: str, what: str) -> str:
    fact = harness.facts()[agent]
    return f"{fact['package']}@{fact['version']} sent a different {what} than our profile renders"


def test_the_pinned_binaries_are_the_recorded_versions() -> None:
    harness.skip_unless_available()
    facts = harness.facts()
    for agent in harness.AGENTS:
        argv = ["unshare", "-n", str(harness.binary(agent)), "--version"]
        line = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True).stdout.strip()
        assert line == facts[agent]["version_line"], f"{agent} is {line!r}; re-record facts.json and the cases"


def test_at_least_thirty_workspaces_are_checked() -> None:
    assert len(CASES) >= 30


@pytest.mark.parametrize("case", [c for c in CASES if "claude" in c.agents], ids=lambda c: c.name)
def test_claude_profile_renders_what_claude_code_sent(
    case: harness.Workspace, runs: dict[tuple[str, str], harness.Run]
) -> None:
    run = runs[(case.name, "claude")]
    assert run.exit == 0, run.stderr
    body = run.model_request()
    ours = _ours(run)
    sent = harness.claude_reminder(body)
    assert claude_reminder(ours.project_doc()) == (sent or ""), _moved("claude", "instruction block")
    builtin = harness.facts()["claude"]["builtin_skills"]
    lines = claude_skill_lines(ours.skills, [path for path, _ in skill_roots(ours)])
    assert lines == harness.claude_skill_lines(body, builtin), _moved("claude", "skills list")


@pytest.mark.parametrize("case", [c for c in CASES if "codex" in c.agents], ids=lambda c: c.name)
def test_codex_profile_renders_what_codex_sent(
    case: harness.Workspace, runs: dict[tuple[str, str], harness.Run]
) -> None:
    run = runs[(case.name, "codex")]
    assert run.exit == 0, run.stderr
    body = run.model_request()
    ours = _ours(run)
    doc = ours.project_doc()
    mine = None if doc.empty else codex_instructions(doc.content, run.cwd, project=bool(doc.project_text))
    assert mine == harness.codex_doc(body), _moved("codex", "AGENTS.md message")
    block, _ = codex_skills_block(ours.skills, skill_roots(ours), Budget.for_window(None))
    assert block == (harness.codex_skills_block(body) or ""), _moved("codex", "skills block")
    names = harness.codex_skill_names(harness.codex_skills_block(body))
    assert set(harness.facts()["codex"]["system_skills"]) <= set(names), _moved("codex", "set of system skills")


@pytest.mark.parametrize("case", [c for c in CASES if "gemini" in c.agents], ids=lambda c: c.name)
def test_gemini_profile_renders_what_gemini_cli_sent(
    case: harness.Workspace, runs: dict[tuple[str, str], harness.Run]
) -> None:
    run = runs[(case.name, "gemini")]
    assert run.exit == 0, run.stderr
    body = run.model_request()
    ours = _ours(run)
    assert ours.peer.wrap(ours.project_doc(), run.cwd) == harness.gemini_context(body), _moved("gemini", "context")
    found = ours.snapshot.of_kind(Kind.SKILL)
    containers = [path for path, _ in skill_roots(ours)]
    listing = gemini_skills_xml(found, containers)
    sent = harness.gemini_skills(body)
    # The same entries, each name where its first copy was met: by container, in containers' order. Within one
    # folder Gemini CLI lists what glob found in the order glob found it: reverse byte order on a quiet machine,
    # not always under load (glob's results are not sorted), so that order is not held here.
    assert sorted(harness.gemini_skill_entries(listing)) == sorted(harness.gemini_skill_entries(sent)), _moved(
        "gemini", "skills list"
    )
    met = _first_met(found, containers)
    ranks = [met[name] for name, _ in harness.gemini_skill_entries(sent)]
    assert ranks == sorted(ranks), _moved("gemini", "skills list's order of folders")
    builtin = harness.facts()["gemini"]["builtin_skills"]
    assert set(builtin) <= set(harness.gemini_skill_names(body)), _moved("gemini", "set of built-in skills")


@pytest.mark.parametrize("case", [c for c in CASES if "opencode" in c.agents], ids=lambda c: c.name)
def test_opencode_profile_renders_what_opencode_sent(
    case: harness.Workspace, runs: dict[tuple[str, str], harness.Run]
) -> None:
    run = runs[(case.name, "opencode")]
    assert run.exit == 0, run.stderr
    body = run.model_request()
    ours = _ours(run)
    sent = harness.opencode_instructions(body)
    rendered = ours.peer.wrap(ours.project_doc(), run.cwd)
    # The same sections, each pattern's matches where ours are; node-glob promises no order among one pattern's
    # matches (a busy CI run sent rules/x/y.md before rules/.h/dot.md), so that order is not held here.
    assert sorted(_opencode_sections(rendered)) == sorted(_opencode_sections(sent)), _moved("opencode", "instructions")
    named = {r.path: r.load.reason for r in ours.snapshot.of_kind(Kind.INSTRUCTION_FILE) if r.load and r.load.reason}
    group = _groups([_section_path(s) for s in _opencode_sections(rendered)], named)
    sent_groups = [group[_section_path(s)] for s in _opencode_sections(sent)]
    assert sent_groups == sorted(sent_groups), _moved("opencode", "instructions' order")
    offered = [r for r in ours.snapshot.of_kind(Kind.SKILL) if r.status is Status.OK]
    assert opencode_skills_xml(offered) == harness.opencode_skills(body), _moved("opencode", "skills list")
    builtin = harness.facts()["opencode"]["builtin_skills"]
    assert set(builtin) <= set(harness.opencode_skill_names(body)), _moved("opencode", "set of built-in skills")


@pytest.mark.parametrize("case", [c for c in CASES if c.read and "opencode" in c.agents], ids=lambda c: c.name)
def test_opencode_profile_adds_what_opencode_sends_after_a_read(
    case: harness.Workspace, runs: dict[tuple[str, str], harness.Run]
) -> None:
    run = runs[(case.name, "opencode")]
    assert run.exit == 0 and run.read, run.stderr
    config = load_config(run.cwd, environ={"HOME": run.home}, overrides={"profile": "opencode"})
    scanner = Scanner(run.cwd, config, environ={"HOME": run.home})
    answer = scanner.applicable([run.read])
    assert peers.of(config).wrap_later(answer) == harness.opencode_on_read(run.after_read()), _moved(
        "opencode", "set of files after a read"
    )


@pytest.mark.parametrize("case", [c for c in CASES if "copilot" in c.agents], ids=lambda c: c.name)
def test_copilot_profile_renders_what_copilot_cli_sent(
    case: harness.Workspace, runs: dict[tuple[str, str], harness.Run]
) -> None:
    run = runs[(case.name, "copilot")]
    assert run.exit == 0, run.stderr
    body = run.model_request()
    ours = _ours(run)
    sent = harness.copilot_instructions(body)
    assert ours.peer.wrap(ours.project_doc(), run.cwd) == sent, _moved("copilot", "custom instructions")
    roots = [path for path, _ in skill_roots(ours)]
    offered = [r for r in ours.snapshot.of_kind(Kind.SKILL) if r.status is Status.OK and r.name]
    listing = copilot_skills_xml(offered, roots, run.cwd, ours.layout.doc_boundary, run.home)
    assert listing == harness.copilot_skills(body), _moved("copilot", "skills list")
    assert harness.copilot_builtin_skills(body) == list(COPILOT_BUILTIN_SKILLS), _moved("copilot", "built-in skills")


@pytest.mark.parametrize("case", [c for c in CASES if c.read and "copilot" in c.agents], ids=lambda c: c.name)
def test_copilot_profile_adds_what_copilot_cli_sends_after_a_view(
    case: harness.Workspace, runs: dict[tuple[str, str], harness.Run]
) -> None:
    run = runs[(case.name, "copilot")]
    assert run.exit == 0 and run.read, run.stderr
    ours = _ours(run)
    found = Scanner(run.cwd, ours.config, environ={"HOME": run.home, **run.env}).applicable([run.read])
    framed = ours.peer.wrap_later(found) or []
    assert "".join(framed) == (harness.copilot_on_read(run.after_view()) or ""), _moved("copilot", "reminders")


@pytest.mark.parametrize("case", [c for c in CASES if c.read and "claude" in c.agents], ids=lambda c: c.name)
def test_claude_profile_adds_what_claude_code_sends_after_a_read(
    case: harness.Workspace, runs: dict[tuple[str, str], harness.Run]
) -> None:
    run = runs[(case.name, "claude")]
    assert run.exit == 0 and run.read, run.stderr
    config = load_config(run.cwd, environ={"HOME": run.home}, overrides={"profile": "claude"})
    found = Scanner(run.cwd, config, environ={"HOME": run.home}).applicable([run.read])
    ours = claude_nested.render((f.resource, f.hook) for f in found.files)
    assert ours == harness.claude_on_read(run.after_read()), _moved("claude", "set of files after a Read")


def test_real_runs_stay_inside_the_namespace(runs: dict[tuple[str, str], harness.Run]) -> None:
    """Each agent talked only to our fake API: its one model request reached the recorder."""
    for (name, agent), run in runs.items():
        assert run.model_request(), (name, agent)


def _first_met(skills: Sequence[Resource], containers: Sequence[str]) -> dict[str, int]:
    """Each skill name's first container, by its place in ``containers`` (the order Gemini CLI loads them)."""
    rank = {root: i for i, root in enumerate(containers)}
    met: dict[str, int] = {}
    for skill in skills:
        root = root_of(skill.path, containers)
        if skill.name is not None and root is not None:
            met[skill.name] = min(met.get(skill.name, len(rank)), rank[root])
    return met


def _opencode_sections(text: str) -> list[str]:
    """OpenCode's instructions text cut before each ``Instructions from: `` line."""
    return [part for part in re.split(r"(?m)^(?=Instructions from: )", text) if part]


def _section_path(section: str) -> str:
    return section.split("\n", 1)[0].removeprefix("Instructions from: ")


def _groups(paths: Sequence[str], named: Mapping[str, str]) -> dict[str, int]:
    """Each path's place among runs of files: the matches of one ``instructions`` pattern are one run (their
    reason names the pattern), every other file a run of its own."""
    group: dict[str, int] = {}
    last: str | None = None
    for path in paths:
        reason = named.get(path, "")
        key = reason if reason.startswith("named by instructions in ") else path
        group[path] = len(set(group.values())) - (key == last)
        last = key
    return group
