"""What the README, AGENTS.md and ``docs/`` point at exists: the files and tests they name, and the
pages and headings they link to.

A reader reruns ``tests/x.py::test_name`` or opens ``src/agentcontext/y.py`` as written, so a renamed
test or a moved module fails here rather than in front of them. Only names a reader can follow as
they stand are checked: a path with a placeholder (``<name>``, ``*``, ``...``) is a pattern, not a
path. ``bench/RESULTS.md`` is a record of what was measured at the time, so its history is left as it
was written.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "AGENTS.md", *sorted((ROOT / "docs").glob("*.md"))]
CITED = re.compile(r"`((?:src|tests|bench|scripts|docs|\.ci)/[^`\s]*)`")
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} +(.+?) *#*$", re.MULTILINE)
FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
PATTERN = re.compile(r"[<>*{}]|\.\.\.|\bN\b")


def _prose(page: Path) -> str:
    """The page without its fenced blocks: those show commands and output, not references."""
    return FENCE.sub("", page.read_text(encoding="utf-8"))


def cited() -> Iterator[tuple[str, str]]:
    for page in PAGES:
        for match in CITED.finditer(_prose(page)):
            reference = match.group(1).rstrip(".,:;")
            if not PATTERN.search(reference):
                yield page.name, reference


def linked() -> Iterator[tuple[Path, str]]:
    for page in PAGES:
        for match in LINK.finditer(_prose(page)):
            target = match.group(1)
            if not re.match(r"[a-z]+:", target):  # http:, https:, mailto: are not ours to check
                yield page, target


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces made hyphens."""
    text = re.sub(r"`|\*\*|\[([^]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    for heading in HEADING.findall(_prose(page)):
        base, n = slug(heading), 0
        while (anchor := base if n == 0 else f"{base}-{n}") in found:
            n += 1
        found.add(anchor)
    return found


@pytest.mark.parametrize(("page", "reference"), sorted(set(cited())))
def test_every_file_and_test_the_docs_cite_exists(page: str, reference: str) -> None:
    path, _, test = reference.partition("::")
    assert (ROOT / path).exists(), f"{page} cites {path}, which is not in the repository"
    if test:
        name = test.split("::")[-1].split("[")[0]
        text = (ROOT / path).read_text(encoding="utf-8")
        assert re.search(rf"def {re.escape(name)}\(", text), f"{page} cites {reference}: no such test in {path}"


@pytest.mark.parametrize(("page", "target"), sorted(set(linked())), ids=lambda v: getattr(v, "name", v))
def test_every_link_between_pages_reaches_a_page_and_its_heading(page: Path, target: str) -> None:
    path, _, anchor = target.partition("#")
    linked_page = (page.parent / path).resolve() if path else page
    assert linked_page.exists(), f"{page.name} links to {path}, which does not exist"
    if anchor and linked_page.suffix == ".md":
        assert anchor in anchors(linked_page), f"{page.name} links to #{anchor}, not a heading of {linked_page.name}"
