"""The HTTP edge every server of ours shares: the workspace agent, the control plane (and its dashboard) and the
MCP server over HTTP.

``hosts`` says which Host and Origin a server answers to, ``guard`` refuses everything else (and
unauthenticated or oversized requests) before any work, ``serving`` runs uvicorn with a cap on
open connections and a deadline for each request's head.
"""
