"""Tool and server records: what votr-mcp knows about each upstream tool."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ToolKey", "Tool", "Server", "Catalog"]

ToolKey = tuple[str, str]
"""(server name, tool name): unique within a catalog."""


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool of one upstream server, as harvested from ``tools/list`` or a corpus file.

    ``input_schema``, ``output_schema`` and ``annotations`` are treated as read-only.
    ``examples`` are example queries (used for Tool2Vec vectors when present);
    ``extra`` keeps source-specific metadata that is not part of the definition;
    ``hidden`` says which texts had invisible characters removed when the tool was loaded
    (see :mod:`votr_mcp.catalog.safety`): the text is clean, the attempt is still evidence.
    """

    server: str
    name: str
    description: str = ""
    input_schema: Mapping[str, Any] = field(default_factory=dict)
    server_description: str = ""
    server_summary: str = ""
    title: str | None = None
    output_schema: Mapping[str, Any] | None = None
    annotations: Mapping[str, Any] | None = None
    examples: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)
    hidden: tuple[str, ...] = field(default=(), compare=False)

    @property
    def key(self) -> ToolKey:
        return (self.server, self.name)


@dataclass(frozen=True, slots=True)
class Server:
    """An upstream server: its name and the texts that describe it."""

    name: str
    description: str = ""
    summary: str = ""


class Catalog(Sequence[Tool]):
    """An ordered, immutable collection of tools with unique ``(server, name)`` keys.

    Order is stable (first seen first) so that index positions are reproducible.
    Later duplicates of a key are dropped; ``duplicates`` lists them.
    """

    __slots__ = ("_tools", "_by_key", "_servers", "duplicates")

    def __init__(self, tools: Iterable[Tool]) -> None:
        kept: list[Tool] = []
        by_key: dict[ToolKey, int] = {}
        dups: list[ToolKey] = []
        for tool in tools:
            if tool.key in by_key:
                dups.append(tool.key)
                continue
            by_key[tool.key] = len(kept)
            kept.append(tool)
        self._tools: tuple[Tool, ...] = tuple(kept)
        self._by_key = by_key
        self.duplicates: tuple[ToolKey, ...] = tuple(dups)
        servers: dict[str, Server] = {}
        for tool in kept:
            if tool.server not in servers:
                servers[tool.server] = Server(
                    tool.server, tool.server_description, tool.server_summary
                )
        self._servers = servers

    def __len__(self) -> int:
        return len(self._tools)

    def __getitem__(self, index: int) -> Tool:  # type: ignore[override]
        return self._tools[index]

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools)

    def __contains__(self, key: object) -> bool:
        return key in self._by_key

    def get(self, key: ToolKey) -> Tool | None:
        """The tool with this key, or None."""
        index = self._by_key.get(key)
        return None if index is None else self._tools[index]

    def tool_keys(self) -> Iterable[ToolKey]:
        """Every tool's key in order, read without the tools (a catalog loaded from an index
        snapshot makes each tool only when it is read)."""
        return self._by_key.keys()

    def position(self, key: ToolKey) -> int | None:
        """The index of this key in iteration order, or None."""
        return self._by_key.get(key)

    @property
    def servers(self) -> Mapping[str, Server]:
        """Servers in order of first appearance."""
        return self._servers

    def __repr__(self) -> str:
        return f"Catalog({len(self._tools)} tools, {len(self._servers)} servers)"
