"""The exception tree of votr-mcp. Nothing here imports the rest of the package.

    VotrError
    ├── ConfigError          a settings or upstream-config problem the user must fix
    ├── CatalogError         a tool catalog that cannot be read at all
    ├── RetrievalError       a search that cannot run (bad arguments, missing index)
    ├── StoreError           the SQLite registry cannot be opened, migrated or written
    ├── UpstreamError        an upstream MCP server failed, hung or is not connected
    │   └── UpstreamTimeout  an upstream request ran past its deadline
    └── SessionError         a session id that is unknown, expired or not yours

Foreign exceptions are mapped at the boundary with ``raise Mine(...) from exc``; every
message says what was wrong and what to do about it.
"""

from __future__ import annotations

__all__ = [
    "VotrError",
    "ConfigError",
    "CatalogError",
    "RetrievalError",
    "StoreError",
    "UpstreamError",
    "UpstreamTimeout",
    "SessionError",
]


class VotrError(Exception):
    """Base of every error votr-mcp raises on purpose."""


class ConfigError(VotrError):
    """A settings or upstream-config problem the user must fix."""


class CatalogError(VotrError):
    """A tool catalog that cannot be read at all."""


class RetrievalError(VotrError):
    """A search that cannot run."""


class StoreError(VotrError):
    """The SQLite registry cannot be opened, migrated or written."""


class UpstreamError(VotrError):
    """An upstream MCP server failed, hung or is not connected."""


class UpstreamTimeout(UpstreamError):
    """An upstream request ran past its deadline."""


class SessionError(VotrError):
    """A session id that is unknown, expired or belongs to another session."""
