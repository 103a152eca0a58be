"""The retrieval API the server uses: one protocol, met by the Retriever and by the empty catalog.

The server holds a :class:`Searcher` per index snapshot and never reaches past this protocol: it
searches (a :class:`~votr_mcp.retrieval.result.SearchResult`, whose fields it reads directly), moves
the searcher to a new catalog, patches a few changed tools in, attaches the embedding model when
it has loaded, and warms the abstention threshold before a snapshot goes live. A catalog with no
tools (before any upstream has listed one) is a state of its own, :class:`EmptyCatalog`, not a
retriever that fails: it abstains and remembers the model for when tools arrive.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol

from votr_mcp.catalog.models import Catalog, Tool, ToolKey
from votr_mcp.index.dense import Embedder, EmbeddingCache
from votr_mcp.retrieval.pipeline import Exclude, Retriever
from votr_mcp.retrieval.result import SearchResult

__all__ = ["EMPTY_REASON", "EmptyCatalog", "Searcher", "searcher_for"]

EMPTY_REASON = "no tools are indexed yet (no upstream server has listed any)"


class Searcher(Protocol):
    """What the server asks of retrieval (the :class:`Retriever` and :class:`EmptyCatalog` are both one)."""

    @property
    def embedder(self) -> Embedder | None: ...

    @property
    def cache(self) -> EmbeddingCache | None: ...

    @property
    def dense_ready(self) -> bool: ...

    def search(self, query: str, *, server_intent: str | None = None, tool_intent: str | None = None,
               max_results: int | None = None, exclude: Exclude = ()) -> SearchResult: ...

    def with_catalog(self, catalog: Catalog) -> Searcher: ...

    def with_tools_changed(self, changed: Sequence[Tool] = (), removed: Collection[ToolKey] = ()) -> Searcher: ...

    def with_embedder(self, embedder: Embedder, cache: EmbeddingCache | None = None) -> Searcher: ...

    def warm(self) -> Searcher: ...


class EmptyCatalog:
    """The searcher of a catalog with no tools: every search abstains, saying why."""

    def __init__(self, embedder: Embedder | None = None, cache: EmbeddingCache | None = None) -> None:
        self._embedder = embedder
        self._cache = cache

    @property
    def embedder(self) -> Embedder | None:
        return self._embedder

    @property
    def cache(self) -> EmbeddingCache | None:
        return self._cache

    @property
    def dense_ready(self) -> bool:
        return False

    def search(self, query: str, *, server_intent: str | None = None, tool_intent: str | None = None,
               max_results: int | None = None, exclude: Exclude = ()) -> SearchResult:
        return SearchResult(query=query, hits=(), ranked=(), k=0, tier="none", abstained=True, reason=EMPTY_REASON,
                            dense_used=False)

    def with_catalog(self, catalog: Catalog) -> Searcher:
        return searcher_for(catalog, embedder=self._embedder, cache=self._cache)

    def with_tools_changed(self, changed: Sequence[Tool] = (), removed: Collection[ToolKey] = ()) -> Searcher:
        return self.with_catalog(Catalog(changed))

    def with_embedder(self, embedder: Embedder, cache: EmbeddingCache | None = None) -> Searcher:
        return EmptyCatalog(embedder, cache if cache is not None else self._cache)

    def warm(self) -> Searcher:
        return self


def searcher_for(catalog: Catalog, *, embedder: Embedder | None = None, cache: EmbeddingCache | None = None) -> Searcher:
    """The searcher of a catalog: a :class:`Retriever` (lexical, ready in milliseconds, unless given an
    embedder), or :class:`EmptyCatalog` when it has no tools."""
    if len(catalog) == 0:
        return EmptyCatalog(embedder, cache)
    return Retriever.build(catalog, embedder=embedder, cache=cache)
