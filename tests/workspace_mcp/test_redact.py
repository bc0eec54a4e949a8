"""Masking the values an MCP entry declares, wherever a report quotes them."""

from __future__ import annotations

from agentcontext.workspace_mcp.redact import MASK, redact, secret_values


def test_env_and_header_values_and_their_parts_are_masked_longest_first() -> None:
    secrets = secret_values(["Bearer tok_0123456789", "sk-abcdef"])
    text = "sent Bearer tok_0123456789; then tok_0123456789 alone; key sk-abcdef"
    assert redact(text, secrets) == f"sent {MASK}; then {MASK} alone; key {MASK}"


def test_credentials_and_query_values_of_the_url_are_masked() -> None:
    secrets = secret_values([], "https://user:pa55word@example.test/mcp?key=qwerty123&debug=1")
    text = "GET https://user:pa55word@example.test/mcp?key=qwerty123&debug=1 failed"
    assert redact(text, secrets) == f"GET https://user:{MASK}@example.test/mcp?key={MASK}&debug=1 failed"


def test_short_values_are_settings_and_left_alone() -> None:
    assert secret_values(["1", "true", "dev", "Bearer"]) == ()
    assert redact("debug=1 mode=dev", secret_values(["1", "dev"])) == "debug=1 mode=dev"
