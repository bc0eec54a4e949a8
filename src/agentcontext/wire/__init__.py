"""The contracts other processes rely on: the agent's pushes to the control plane, each agent's view."""
