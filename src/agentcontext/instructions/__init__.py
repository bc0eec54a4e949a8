"""Instruction files (AGENTS.md and its kin): the chain, the doc budget, what applies to given paths, why."""
