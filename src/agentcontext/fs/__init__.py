"""Reading files beneath a root: no link followed out of it, every read bounded, text decoded as agents decode it."""
