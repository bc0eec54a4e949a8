"""Markdown to HTML for skill bodies: CommonMark with raw HTML off, so a body cannot inject markup.

markdown-it escapes every ``<`` it does not produce itself and refuses ``javascript:``-like
link targets; the result is safe to put into a page unescaped.
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markupsafe import Markup

_RENDERER = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")


def render(text: str) -> Markup:
    return Markup(_RENDERER.render(text))  # html is disabled: the output escapes the input
