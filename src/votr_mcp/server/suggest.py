"""Servers the user has not connected that would serve a request nothing connected serves.

The project ships a catalog of known servers (``registry/``: tools/list captured from real servers,
each with the ``mcpServers`` entry that starts it). When a search abstains, or its best tool is only
of low confidence, the same request is searched among the known servers' tools that are not
connected; a confident answer there is named with its entry, so the user can add that server.
The retriever over the known servers is built on first use, with the live index's embedder.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from votr_mcp.catalog.models import Catalog, Tool

__all__ = ["Suggestion", "Suggester"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Suggestion:
    server: str
    tool: str
    entry: Mapping[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {"server": self.server, "tool": self.tool, "mcpServers": {self.server: dict(self.entry)}}


class Suggester:
    """Searches the known servers' catalog for requests the connected servers do not serve."""

    def __init__(self, catalog: Catalog, entries: Mapping[str, Mapping[str, Any]]) -> None:
        self.catalog = Catalog(t for t in catalog if t.server in entries)
        self.entries = dict(entries)
        self._lock = threading.Lock()
        self._retriever: Any = None
        self._dense = False

    def _searcher(self, like: Any) -> Any:
        """The retriever over the known servers, dense as soon as ``like`` (the live one) is."""
        from votr_mcp.retrieval.pipeline import Retriever

        embedder = getattr(like, "embedder", None) if getattr(like, "dense_ready", False) else None
        with self._lock:
            if self._retriever is None or (embedder is not None and not self._dense):
                self._retriever = Retriever.build(self.catalog, embedder=embedder, cache=getattr(like, "cache", None))
                self._dense = embedder is not None
            return self._retriever

    def suggest(self, query: str, like: Any, connected: Collection[str],
                visible: Callable[[Tool], bool] = lambda tool: True, most: int = 2) -> list[Suggestion]:
        """Up to ``most`` known servers, not connected, whose tools this request confidently finds."""
        if not len(self.catalog):
            return []
        searcher = self._searcher(like)
        exclude = [t.key for t in self.catalog if t.server in connected or not visible(t)]
        if len(exclude) == len(self.catalog):
            return []
        result = searcher.search(query, exclude=exclude)
        if getattr(result, "abstained", True) or not self._dense:
            return []  # without the model's evidence there is no abstention to trust: suggest nothing
        out: dict[str, Suggestion] = {}
        for hit in result.hits:
            if hit.tier in ("high", "medium") and hit.tool.server not in out:
                out[hit.tool.server] = Suggestion(hit.tool.server, hit.tool.name, self.entries[hit.tool.server])
        return list(out.values())[:most]
