"""Copilot CLI's ``applyTo`` globs (1.0.102, as observed), matched against a path relative to the git root.

``src/**/*.ts``, ``**/deep/*``, ``**/*.{ts,js}``, ``src/**`` and ``./src/**`` match
``src/deep/x.ts``; a glob without ``/`` matches the file's name at any depth (``*.ts``,
``x.ts``); ``src/*.ts`` one level only; ``/src/**``, ``deep/*.ts``, ``src/deep`` and
``src/deep/`` match nothing there. Letters match in their own case. Matched segment by segment
without backtracking (:mod:`agentcontext.instructions.globs`).
"""

from __future__ import annotations

from collections.abc import Sequence

from agentcontext.instructions.globs import MAX_GLOB_CHARS, MAX_PATTERNS, exact_segments, expand_braces, matches_whole


def applies(patterns: Sequence[str], relative: str) -> bool:
    """Whether any of ``patterns`` takes the file at ``relative`` (``/``-separated)."""
    parts = [p for p in relative.split("/") if p]
    if not parts:
        return False
    for glob in patterns:
        if len(glob) > MAX_GLOB_CHARS:
            continue
        for one in expand_braces(glob)[:MAX_PATTERNS]:
            text = one
            while text.startswith("./"):
                text = text[2:]
            if not text or text.startswith("/") or text.endswith("/"):
                continue
            segments = exact_segments(text if "/" in text else f"**/{text}")
            if matches_whole(segments, parts):
                return True
    return False
