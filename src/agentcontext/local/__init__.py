"""`agentcontext up`: the control plane and a workspace agent on this machine, run as one."""
