"""One error hierarchy for the whole package, translated at each edge.

    AgentContextError
    ├── ConfigError          a config file, environment variable or flag is unusable
    ├── ScanError            the scan cannot start (the work dir is missing, not a directory)
    ├── FrontmatterError     a SKILL.md frontmatter cannot be used
    ├── McpConfigError       an MCP config file is not valid JSON of a known shape
    ├── UnsafePathError      a requested path would leave its allowed root
    ├── NotFoundError        a named thing (skill, resource, chat) does not exist
    ├── InvalidRequestError  a request to the control plane is malformed or over a limit
    ├── AuthError            no credential, or one that is not valid
    ├── ForbiddenError       a valid credential that may not do this
    ├── ConflictError        the request collides with what exists (a duplicate name)
    └── UnavailableError     a needed part is off or out of reach (sync disabled, agent offline)

The CLI turns these into messages and exit codes; the HTTP APIs into status codes;
the MCP server into tool results with ``isError``. Nothing else is raised on purpose
for bad input: problems found while scanning become resource statuses, not exceptions.
"""

from __future__ import annotations


class AgentContextError(Exception):
    """Base of every error this package raises on purpose."""


class ConfigError(AgentContextError):
    """A setting could not be read or has an unusable value."""

    def __init__(self, message: str, *, source: str | None = None) -> None:
        self.message = message
        self.source = source
        super().__init__(f"{source}: {message}" if source else message)


class ScanError(AgentContextError):
    """The scan could not start at all."""


class FrontmatterError(AgentContextError):
    """A SKILL.md frontmatter could not be split or parsed."""


class McpConfigError(AgentContextError):
    """An MCP configuration file as a whole is unusable."""


class UnsafePathError(AgentContextError):
    """A path was refused because it would read outside its allowed root."""


class NotFoundError(AgentContextError):
    """The named skill, file or resource does not exist."""


class InvalidRequestError(AgentContextError):
    """A request was malformed, failed validation or went over a limit."""


class AuthError(AgentContextError):
    """No credential was presented, or it is not one we issued."""


class ForbiddenError(AgentContextError):
    """The credential is valid but may not do this."""


class ConflictError(AgentContextError):
    """The request collides with something that exists."""


class UnavailableError(AgentContextError):
    """A part this request needs is switched off or cannot be reached."""
