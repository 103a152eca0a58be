"""Turn whatever went wrong while connecting to an upstream into one actionable line."""

from __future__ import annotations

from collections.abc import Iterator

import mcp_types as types
from mcp.shared.exceptions import MCPError

from votr_mcp.errors import UpstreamError
from votr_mcp.upstream.config import UpstreamConfig

__all__ = ["describe_failure"]


def describe_failure(config: UpstreamConfig, exc: BaseException) -> str:
    """A short, actionable reason for a failed connection attempt."""
    leaves = list(_leaves(exc))
    first = leaves[0] if leaves else exc
    if isinstance(first, FileNotFoundError) and config.transport == "stdio":
        return f"cannot start '{config.command}': command not found; check 'command' and PATH"
    if isinstance(first, PermissionError) and config.transport == "stdio":
        return f"cannot start '{config.command}': permission denied"
    if isinstance(first, MCPError):
        if first.error.code == types.CONNECTION_CLOSED:
            return "the server exited or closed the connection during the handshake"
        return f"handshake failed: {first.error.message} (code {first.error.code})"
    if isinstance(first, UpstreamError):
        return str(first)
    text = str(first) or type(first).__name__
    return f"{type(first).__name__}: {text}" if config.transport == "stdio" else f"cannot reach {config.display_url}: {text}"


def _leaves(exc: BaseException) -> Iterator[BaseException]:
    inner_exceptions = getattr(exc, "exceptions", None)  # an ExceptionGroup from the SDK's task groups
    if isinstance(inner_exceptions, tuple):
        for inner in inner_exceptions:
            yield from _leaves(inner)
    else:
        yield exc
