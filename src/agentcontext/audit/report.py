"""The audit: what in a workspace's agent context deserves a human look, with stable codes.

Text rules apply to every instruction file and SKILL.md the scan looked at, and to the
other files of each skill folder (HTML comments: Markdown files only). Each rule is a
finding code (severity in brackets):

* ``bidi-control`` [error; warning for the marks U+061C, U+200E, U+200F]: a bidirectional
  control: the text displays in another order than the model reads it (Trojan Source).
* ``tag-characters`` [error]: Unicode tag characters (U+E0000-U+E007F), invisible ASCII
  that models read; the message decodes them. England's, Scotland's and Wales's flags are left alone.
* ``hidden-characters`` [warning]: other invisible code points (zero-width, soft hyphen,
  word joiner, variation selectors...). A zero-width joiner between two pictographs and a single
  U+FE0E/U+FE0F after a pictograph or in a keycap (emoji) are left alone (``sanitize.emoji_part``, as the
  scan's warnings).
* ``html-comment`` [warning]: an HTML comment outside code: hidden when the Markdown is
  rendered, given as is to agents that do not sanitise; an unclosed one hides the rest.
* ``large-instruction`` [info at 75% of the project doc budget, warning over it or at 75%
  of the per-file cap]: instruction files and SKILL.md files near the limits that cut them.
* ``skill-allowed-tools`` [warning; info for unscoped Write, Edit, WebFetch...]:
  ``allowed-tools`` granting every tool, a shell without a pattern, or a shell pattern
  that starts an interpreter (``Bash(python:*)``).
* ``skill-scripts`` [warning]: executable files and scripts (``*.sh``, ``*.py``...) in a
  skill folder, which an agent following the skill may run.
* ``skill-beyond-scan`` [warning]: a ``SKILL.md`` the scan did not reach (past
  ``skills.max_dirs_per_root`` folders, or deeper than ``skills.max_depth``), found by the
  audit's own walk (:mod:`agentcontext.audit.skills`); agents with other limits load it,
  so it gets every skill rule above as well.
* ``audit-incomplete`` [error]: the time limit ran out before the walk or the checks were
  done; the report is marked incomplete (and the CLI exits 1 whatever ``--fail-on`` says).
* MCP rules live in :mod:`agentcontext.audit.mcp`.
* ``agent-blind-spot`` [warning; info when the agents were not named]: a file of the repository
  some of the compared agents load and others never do (:mod:`agentcontext.audit.blind_spots`).
* ``config-ignored`` [warning]: a key of the repository's ``agentcontext.toml`` that was
  ignored: one a repository may not set (trust, directories, caps above the default...),
  an unknown key or a bad value.
* ``scan-invalid``, ``scan-unreadable``, ``scan-oversize`` [error], ``scan-excluded``,
  ``scan-truncated`` [warning]: every resource the scan could not load whole, with its
  reason; ``scan-warning`` [info] carries the scan's other warnings; ``scan-error``
  [error] a snapshot error.

Files are read again through :class:`~agentcontext.fs.files.Reader` (a skill's other files
through :func:`~agentcontext.skills.folder.open_folder`), bounded by the per-file cap and
walked from the boundary the scan read each from (a skill's files from its folder), so
the audit reads nothing the scan could not, even while files are swapped. At most 50 findings of one code are
listed per file; one more counts the rest.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from itertools import groupby

from agentcontext.audit import blind_spots
from agentcontext.audit import mcp as audit_mcp
from agentcontext.audit import skills as audit_skills
from agentcontext.audit.findings import Finding, Report, Severity, printable
from agentcontext.audit.skills import DEFAULT_SECONDS, Budget
from agentcontext.errors import FrontmatterError, UnsafePathError
from agentcontext.fs import text_links
from agentcontext.fs.files import EntryKind, Reader
from agentcontext.fs.textdecode import decode, prepare
from agentcontext.resource import Kind, Resource, Status
from agentcontext.sanitize import BIDI_CONTROLS, HIDDEN_CLASS, TAG_RANGE, emoji_part
from agentcontext.scan import Scanner, ScanResult
from agentcontext.settings.config import Config
from agentcontext.skills.commands import is_command
from agentcontext.skills.folder import SkillFile, SkillFolder, open_folder
from agentcontext.skills.frontmatter import parse as parse_frontmatter
from agentcontext.workspace_mcp.trust import TrustStore

_HIDDEN_RE = re.compile(f"[{HIDDEN_CLASS}]+")
_BIDI_MARKS = frozenset({0x061C, 0x200E, 0x200F})
_COMMENT_RE = re.compile(r"<!--(.*?)(-->|\Z)", re.DOTALL)
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_STATUS_SEVERITY = {
    Status.INVALID: Severity.ERROR,
    Status.UNREADABLE: Severity.ERROR,
    Status.OVERSIZE: Severity.ERROR,
    Status.EXCLUDED: Severity.WARNING,
    Status.TRUNCATED: Severity.WARNING,
}
_KIND_LABEL = {
    Kind.INSTRUCTION_FILE: "instruction file",
    Kind.SKILL: "skill",
    Kind.MCP_CONFIG: "MCP config",
    Kind.MCP_SERVER: "MCP server",
}
_JSON_POSITION = re.compile(r"line (\d+) column (\d+)")
_MARKDOWN_SUFFIXES = frozenset({".md", ".mdx", ".markdown"})
_SHELLS = frozenset({"bash", "shell", "sh", "powershell", "pwsh", "run_shell_command", "exec", "terminal", "computer"})
_WRITERS = frozenset({"write", "edit", "multiedit", "notebookedit", "webfetch", "websearch"})
_INTERPRETERS = frozenset((
    "sh", "bash", "zsh", "fish", "dash", "ksh", "python", "python3", "node", "deno", "bun", "ruby", "perl", "php",
    "lua", "eval", "exec", "sudo", "su", "env", "xargs", "curl", "wget", "npx", "uvx", "pipx", "pwsh", "powershell",
    "cmd", "docker", "ssh",
))  # fmt: skip
_SCRIPT_SUFFIXES = frozenset((
    ".sh", ".bash", ".zsh", ".fish", ".ksh", ".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".php", ".lua",
    ".ps1", ".psm1", ".bat", ".cmd", ".vbs", ".applescript", ".jar", ".exe", ".dll", ".so", ".dylib",
))  # fmt: skip
MAX_SKILL_FILES = 200
MAX_PER_RULE = 50  # findings of one text rule in one file; the rest are counted in one more


def audit(
    result: ScanResult,
    reader: Reader | None = None,
    *,
    budget: Budget | None = None,
    store: TrustStore | None = None,
    agents: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
    named: bool = True,
) -> Report:
    """Audit what a scan found, and every skill the scan's caps left out, within ``budget``.

    ``store`` holds the user's MCP approvals (default: the user's own). ``agents`` (profiles)
    are compared for files some of them never load (:mod:`agentcontext.audit.blind_spots`): warnings
    when the user ``named`` them, information when they are every agent by default. Findings are sorted
    by path, line and column; the report is incomplete when the budget ran out.
    """
    reader = reader or Reader()
    budget = budget or Budget(DEFAULT_SECONDS)
    snapshot = result.snapshot
    found: list[Finding] = []
    seen: set[str] = set()
    try:
        for resource in snapshot.resources:
            found += _status(resource)
            if resource.kind in (Kind.INSTRUCTION_FILE, Kind.SKILL) and resource.path not in seen:
                seen.add(resource.path)
                found += _file_findings(resource, result, reader)
        complete = _beyond_scan(result, reader, budget, found)
        found += audit_mcp.findings(result, reader, store)
    finally:
        reader.release()
    found += _config_findings(result.config)
    severity = Severity.WARNING if named else Severity.INFO
    found += blind_spots.findings(result, agents, os.environ if environ is None else environ, severity)
    if snapshot.error:
        found.append(
            Finding("scan-error", Severity.ERROR, snapshot.work_dir, printable(f"snapshot error: {snapshot.error}"))
        )
    ordered = tuple(sorted(found, key=lambda f: f.sort_key))
    return Report(snapshot.work_dir, snapshot.project_root, ordered, complete)


def _config_findings(config: Config) -> list[Finding]:
    """What the repository's own config tried and was refused: a key it may not set, a bad value."""
    path = config.project_file or config.user_file or ""
    return [Finding("config-ignored", Severity.WARNING, path, printable(warning)) for warning in config.warnings]


def audit_dir(
    work_dir: str | os.PathLike[str] = ".", config: Config | None = None, *, budget: Budget | None = None
) -> Report:
    """Scan ``work_dir`` once and audit it.

    Raises:
        ScanError: the work dir does not exist.
        ConfigError: the configuration is unusable.
    """
    scanner = Scanner(work_dir, config)
    return audit(scanner.run(), scanner.reader, budget=budget)


def _beyond_scan(result: ScanResult, reader: Reader, budget: Budget, found: list[Finding]) -> bool:
    """Findings for the skills only the audit's own walk reached; False when the time ran out."""
    walked = audit_skills.walk(result, reader, budget)
    settings = result.config.skills
    limits = f"skills.max_dirs_per_root = {settings.max_dirs_per_root}, skills.max_depth = {settings.max_depth}"
    for number, skill in enumerate(walked.found):
        if budget.spent():
            left = len(walked.found) - number
            found.append(_incomplete(skill.path, f"{left} skills found beyond the scan were not checked"))
            return False
        message = (
            f"a skill the scan did not reach ({limits}): agents with other limits load it, so the audit checked it"
        )
        found.append(Finding("skill-beyond-scan", Severity.WARNING, skill.path, message))
        found += _unscanned_skill(skill, result, reader)
    if walked.stopped_in is not None:
        found.append(_incomplete(walked.stopped_in, f"{walked.left} folders below it were not looked at"))
        return False
    return True


def _incomplete(path: str, what: str) -> Finding:
    message = (
        f"the audit ran out of time ({what}): skills there may hide anything; run it again with a larger --time-limit"
    )
    return Finding("audit-incomplete", Severity.ERROR, path, printable(message))


def _unscanned_skill(skill: audit_skills.Unscanned, result: ScanResult, reader: Reader) -> list[Finding]:
    cap = result.config.snapshot.max_resource_bytes
    folder = os.path.dirname(skill.path)
    out: list[Finding] = []
    text = _read_text(skill.path, skill.boundary, cap, reader)
    if text is not None:
        out += hidden_characters(skill.path, text) + html_comments(skill.path, text)
        out += allowed_tools(skill.path, text, os.path.basename(folder))
    return out + _skill_folder(folder, os.path.basename(folder), result, cap, boundary=skill.boundary)


def _status(resource: Resource) -> list[Finding]:
    severity = _STATUS_SEVERITY.get(resource.status)
    if severity is None:
        return []
    line = column = None
    match = _JSON_POSITION.search(resource.error or "") if resource.kind is Kind.MCP_CONFIG else None
    if match:
        line, column = int(match.group(1)), int(match.group(2))
    message = printable(f"{_KIND_LABEL[resource.kind]} {resource.status}: {resource.error or 'no reason given'}")
    return [Finding(f"scan-{resource.status}", severity, resource.path, message, line, column)]


def _file_findings(resource: Resource, result: ScanResult, reader: Reader) -> list[Finding]:
    path = resource.path
    out = [
        _warning(path, warning)
        for warning in resource.warnings
        if not warning.startswith("hidden text")  # the text and path rules below say it in detail
    ]
    out += hidden_characters_in_path(path)
    out += _size(resource, result.config)
    meta_file = result.config.skills.meta_file
    if resource.kind is Kind.SKILL and os.path.basename(path) != meta_file:
        return out  # a folder the skill scan could not list: its status says why
    cap = result.config.snapshot.max_resource_bytes
    text = _read_text(path, result.layout.boundary_of(path), cap, reader)
    if text is not None:
        out += hidden_characters(path, text) + html_comments(path, text)
        if resource.kind is Kind.SKILL:
            out += allowed_tools(path, text, resource.name)
    if resource.kind is Kind.SKILL and not is_command(resource):  # a command is one file: no folder of its own
        folder = os.path.dirname(path)
        out += _skill_folder(folder, resource.name or os.path.basename(folder), result, cap)
    return out


def _warning(path: str, warning: str) -> Finding:
    if warning.startswith(text_links.CHECKED_OUT):  # the agent reads a path for its text: worth fixing
        return Finding("link-checked-out-as-file", Severity.WARNING, path, printable(warning))
    return Finding("scan-warning", Severity.INFO, path, printable(warning))


def _read_text(path: str, boundary: str | None, cap: int, reader: Reader) -> str | None:
    """The file's text within ``cap`` bytes, read beneath the boundary the scan read it from."""
    if boundary is None:
        return None
    entry = reader.probe(path, boundary)
    if entry.kind is not EntryKind.FILE:
        return None
    try:
        raw = reader.read(entry, cap + 1)
    except OSError:
        return None
    return _text(raw, cap)


def _text(raw: bytes, cap: int) -> str | None:
    prepared = prepare(raw[:cap])
    return None if prepared.binary else decode(prepared.data, cut=len(raw) > cap)[0]


def _skill_folder(
    folder: str, skill: str, result: ScanResult, cap: int, *, boundary: str | None = None
) -> list[Finding]:
    """Findings in a skill's other files, read through its folder beneath the scan's boundary (or ``boundary``)."""
    try:
        with open_folder(folder, boundary or result.layout.boundary_of(folder)) as opened:
            files, more = opened.files(limit=MAX_SKILL_FILES, meta_file=result.config.skills.meta_file)
            return skill_scripts(folder, skill, files, more) + skill_texts(opened, files, cap)
    except (OSError, UnsafePathError) as exc:  # gone, or swapped for a link out since the scan
        reason = printable(exc.strerror or str(exc)) if isinstance(exc, OSError) else printable(str(exc))
        message = f'the other files of skill "{printable(skill)}" could not be checked: {reason}'
        return [Finding("skill-scripts", Severity.WARNING, folder, message)]


def _kib(size: int) -> str:
    return f"{size / 1024:.1f} KiB"


def _size(resource: Resource, config: Config) -> list[Finding]:
    if resource.status in _STATUS_SEVERITY:
        return []  # cut, over the cap or unloadable: the scan's reason says it
    size, cap, budget = resource.size_bytes, config.snapshot.max_resource_bytes, config.project_doc.max_bytes
    near_cap = size >= cap * 3 // 4
    cap_note = f"close to the {_kib(cap)} per-file cap, past which it is not read at all"
    if resource.kind is Kind.SKILL:
        message = f"SKILL.md is {_kib(size)}, {cap_note}"
        return [Finding("large-instruction", Severity.WARNING, resource.path, message)] if near_cap else []
    if budget > 0 and size > budget:
        message = f"{_kib(size)}, over the {_kib(budget)} project doc budget: agents that apply it cut the rest"
        if near_cap:
            message += f"; {cap_note}"
        return [Finding("large-instruction", Severity.WARNING, resource.path, message)]
    if near_cap:
        return [Finding("large-instruction", Severity.WARNING, resource.path, f"{_kib(size)}, {cap_note}")]
    if budget > 0 and size >= budget * 3 // 4:
        message = f"{_kib(size)}, close to the {_kib(budget)} project doc budget: more text and agents cut it"
        return [Finding("large-instruction", Severity.INFO, resource.path, message)]
    return []


def _preview(text: str, limit: int = 60) -> str:
    flat = printable(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _name(point: int) -> str:
    return f"U+{point:04X} {unicodedata.name(chr(point), '')}".rstrip()


def _category(char: str) -> str:
    point = ord(char)
    if point in BIDI_CONTROLS:
        return "bidi"
    return "tag" if TAG_RANGE[0] <= point <= TAG_RANGE[1] else "invisible"


def _runs(line: str) -> Iterator[tuple[int, str, str]]:
    """``(start, category, chars)`` for each run of hidden code points of one category."""
    for match in _HIDDEN_RE.finditer(line):
        start = match.start()
        for category, group in groupby(match.group(), key=_category):
            chars = "".join(group)
            yield start, category, chars
            start += len(chars)


def hidden_characters(path: str, text: str) -> list[Finding]:
    """One finding per run of hidden code points, by line and column, each code point named."""
    out: list[Finding] = []
    for number, line in enumerate(text.split("\n"), 1):
        if line.isascii():
            continue
        for start, category, chars in _runs(line):
            end = start + len(chars)
            if not emoji_part(line[start - 1 : start], chars, line[end : end + 1]):
                out.append(_hidden_finding(path, number, start + 1, category, chars))
    return _capped(out)


def hidden_characters_in_path(path: str) -> list[Finding]:
    """One finding per run of hidden code points in the file's path (agents show paths to the model)."""
    if path.isascii():
        return []
    out: list[Finding] = []
    for start, category, chars in _runs(path):
        end = start + len(chars)
        if not emoji_part(path[start - 1 : start], chars, path[end : end + 1]):
            found = _hidden_finding(path, 0, start + 1, category, chars)
            out.append(Finding(found.code, found.severity, path, f"in its path: {found.message}"))
    return _capped(out)


def _capped(found: list[Finding]) -> list[Finding]:
    """At most :data:`MAX_PER_RULE` findings of each code; the rest become one finding that counts them."""
    out: list[Finding] = []
    for code in dict.fromkeys(f.code for f in found):
        same = [f for f in found if f.code == code]
        if len(same) <= MAX_PER_RULE:
            out += same
            continue
        first, rest = same[MAX_PER_RULE - 1], same[MAX_PER_RULE - 1 :]
        severity = max((f.severity for f in rest), key=lambda s: s.rank)
        message = f"{len(rest)} more {code} findings in this file from here on, not listed one by one"
        out += [*same[: MAX_PER_RULE - 1], Finding(code, severity, first.path, message, first.line, first.column)]
    return out


def _points(chars: str) -> str:
    distinct = sorted(set(chars))
    named = ", ".join(_name(ord(c)) for c in distinct[:3])
    return named + (f" and {len(distinct) - 3} more" if len(distinct) > 3 else "")


def _hidden_finding(path: str, line: int, column: int, category: str, chars: str) -> Finding:
    count = len(chars)
    if category == "tag":
        spelled = "".join(chr(ord(c) - 0xE0000) for c in chars if 0xE0020 <= ord(c) <= 0xE007E)
        low, high = min(map(ord, chars)), max(map(ord, chars))
        span = f"U+{low:04X}" if low == high else f"U+{low:04X}-U+{high:04X}"
        spelling = f' spelling "{_preview(spelled)}"' if spelled else ""
        noun = "Unicode tag characters" if count > 1 else "Unicode tag character"
        message = f"{count} {noun} ({span}){spelling}: invisible to a reader, read by models"
        return Finding("tag-characters", Severity.ERROR, path, message, line, column)
    if category == "bidi":
        severity = Severity.WARNING if all(ord(c) in _BIDI_MARKS for c in chars) else Severity.ERROR
        what = f"{count} bidirectional controls ({_points(chars)})" if count > 1 else _points(chars)
        message = f"{what}: changes the order text is displayed in, so a reviewer sees other text than the model"
        return Finding("bidi-control", severity, path, message, line, column)
    what = f"{count} invisible characters ({_points(chars)})" if count > 1 else _points(chars)
    message = f"{what}: invisible to a reader, given to the model as is"
    return Finding("hidden-characters", Severity.WARNING, path, message, line, column)


def _fenced_lines(text: str) -> set[int]:
    """1-based numbers of the lines in fenced code blocks, fences included."""
    fenced: set[int] = set()
    fence = ""
    for number, line in enumerate(text.split("\n"), 1):
        match = _FENCE_RE.match(line)
        if fence:
            fenced.add(number)
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = ""
        elif match:
            fence = match.group(1)
            fenced.add(number)
    return fenced


def html_comments(path: str, text: str) -> list[Finding]:
    """HTML comments outside fenced code and inline code spans."""
    if "<!--" not in text:
        return []
    fenced = _fenced_lines(text)
    out: list[Finding] = []
    for match in _COMMENT_RE.finditer(text):
        start = match.start()
        line_start = text.rfind("\n", 0, start) + 1
        line = text.count("\n", 0, start) + 1
        if line in fenced or text.count("`", line_start, start) % 2:
            continue
        if match.group(2):
            lines = match.group(0).count("\n") + 1
            size = f"{lines} lines" if lines > 1 else "1 line"
            message = (
                f'HTML comment ({size}) "{_preview(match.group(1))}": hidden when the Markdown is rendered, '
                "given as is to agents that do not sanitise"
            )
        else:
            message = "HTML comment never closed: everything after it is hidden when the Markdown is rendered"
        out.append(Finding("html-comment", Severity.WARNING, path, message, line, start - line_start + 1))
    return _capped(out)


def _tool_entries(value: object) -> list[str]:
    """``allowed-tools`` as entries: a list, or a string split on commas and spaces outside parentheses."""
    items = value if isinstance(value, list) else [value] if isinstance(value, str) else []
    out: list[str] = []
    for item in items:
        depth, current = 0, ""
        for char in str(item):
            depth += (char == "(") - (char == ")")
            if depth <= 0 and (char == "," or char.isspace()):
                depth = 0
                if current:
                    out.append(current)
                current = ""
            else:
                current += char
        if current:
            out.append(current)
    return out


def _judge_tool(entry: str) -> tuple[Severity, str] | None:
    tool, _, rest = entry.partition("(")
    pattern = rest[:-1].strip() if rest.endswith(")") else rest.strip()
    name = tool.strip().casefold()
    if name in ("*", "all"):
        return Severity.WARNING, f'"{entry}" grants every tool without asking'
    if name in _SHELLS:
        if pattern in ("", "*", ":*", "**", "* *"):
            return Severity.WARNING, f'"{entry}" runs any shell command without asking'
        program = re.split(r"[\s:]", pattern, maxsplit=1)[0].casefold()
        if os.path.basename(program) in _INTERPRETERS:
            return Severity.WARNING, f'"{entry}" starts {program}, which can run any code, without asking'
        return None
    if name in _WRITERS and pattern in ("", "*", "**"):
        return Severity.INFO, f'"{entry}" applies to any file or address without asking'
    return None


def allowed_tools(path: str, text: str, skill: str | None) -> list[Finding]:
    """Broad grants in a SKILL.md's ``allowed-tools``, at the line of that field."""
    try:
        fields = parse_frontmatter(text).fields
    except FrontmatterError:
        return []  # an invalid skill: its scan status says why
    entries = _tool_entries(fields.get("allowed-tools"))
    line = next((n for n, t in enumerate(text.split("\n"), 1) if t.startswith("allowed-tools")), None)
    label = f'skill "{skill}"' if skill else "this skill"
    out: list[Finding] = []
    for entry in entries:
        verdict = _judge_tool(entry)
        if verdict is not None:
            severity, why = verdict
            message = f"allowed-tools of {label}: {printable(why)}"
            out.append(Finding("skill-allowed-tools", severity, path, message, line, 1 if line else None))
    return out


def skill_scripts(folder: str, skill: str, files: list[SkillFile], more: int) -> list[Finding]:
    """Executable files and scripts among a skill's files (by name and mode; nothing is opened)."""
    out: list[Finding] = []
    for item in files:
        suffix = os.path.splitext(item.path)[1].casefold()
        if not item.executable and suffix not in _SCRIPT_SUFFIXES:
            continue
        what = ("an executable " if item.executable else "a ") + ("script" if suffix in _SCRIPT_SUFFIXES else "file")
        message = (
            f'{what} shipped with skill "{printable(skill)}": an agent following the skill may run it; '
            "read it before trusting the skill"
        )
        out.append(Finding("skill-scripts", Severity.WARNING, item.absolute, message))
    if more:
        message = f'skill "{printable(skill)}" holds {more} more files than the audit checks ({MAX_SKILL_FILES})'
        out.append(Finding("skill-scripts", Severity.WARNING, folder, message))
    return out


def skill_texts(opened: SkillFolder, files: list[SkillFile], cap: int) -> list[Finding]:
    """Hidden text in a skill's other files (models read them too); HTML comments in its Markdown."""
    out: list[Finding] = []
    for item in files:
        try:
            text = _text(opened.read(item.path.split("/"), cap + 1), cap)
        except (OSError, UnsafePathError):
            continue  # gone, or swapped for a link out since it was listed
        if text is None:
            continue  # binary
        out += hidden_characters(item.absolute, text)
        if os.path.splitext(item.path)[1].casefold() in _MARKDOWN_SUFFIXES:
            out += html_comments(item.absolute, text)
    return out
