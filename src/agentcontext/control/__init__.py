"""The control plane: stores the snapshots agents push, pins them to chats, serves each turn's context."""
