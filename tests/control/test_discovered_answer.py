"""A workspace agent's answer about touched paths is a hostile peer's JSON: what no database stores is left out."""

from __future__ import annotations

from agentcontext.control.discovered_answer import parse


def _file(path: str, content: str, warnings: tuple[str, ...] = ()) -> dict[str, object]:
    return {
        "path": path, "scope": "project", "status": "ok", "load": {"type": "on_demand"}, "size_bytes": len(content),
        "content_hash": "", "warnings": list(warnings), "for": ["/w/a/x.py"], "content": content,
    }  # fmt: skip


def test_files_an_agent_answers_with_text_no_database_stores_are_excluded_with_the_reason_not_stored() -> None:
    body = {
        "paths": ["/w/a/x.py"],
        "files": [
            _file("/w/a/AGENTS.md", "fine"),
            _file("/w/b/AGENTS.md", "a\x00b"),
            _file("/w/d/AGENTS.md", "fine", ("a warning \x00",)),
            _file("/w/" + "e" * 1100 + "/AGENTS.md", "fine"),
        ],
    }
    answer = parse(body, ["/w/a/x.py"])
    assert [found.resource.path for found in answer.files] == ["/w/a/AGENTS.md"]
    excluded = dict(answer.excluded)
    assert excluded["/w/b/AGENTS.md"] == "the agent's answer holds a NUL character (\\u0000), which no database stores"
    assert "/w/d/AGENTS.md" in excluded
    assert any(reason == "its path is over the 1,024 bytes a snapshot holds" for reason in excluded.values())
