"""Coder: its shallow scan roots (:mod:`.peer`) and what its chats send (:mod:`.render`)."""
