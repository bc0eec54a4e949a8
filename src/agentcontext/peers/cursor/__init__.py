"""Cursor: its rules as its documentation describes them (no binary of it can be driven offline)."""
