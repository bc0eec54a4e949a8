"""Codex: its AGENTS.md chain (:mod:`.peer`) and what it sends, byte for byte (:mod:`.render`)."""
