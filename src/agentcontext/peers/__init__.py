"""One home per agent: what each reads, loads and sends, by its own rules."""
