"""Servers the user has not connected that would serve a request nothing connected serves.

The project ships catalogs of known servers (``registry/`` and ``known-servers/``: tools/list
captured from real servers, each with the ``mcpServers`` entry that starts it). When a search
abstains, or its best tool is only of low confidence, the same request is searched among the known
servers' tools that are not connected; a confident answer there is named with its entry, so the user
can add that server. A request that names a known server that is not connected ("... on GitHub"),
and that none of the tools found mentions, is searched there too even when the connected tools look
confident (a connected git server is not GitHub); then only the named servers are suggested.

The retriever over the known servers uses the live index's embedder: serve builds it in the
background once the model is loaded (:meth:`Suggester.warm`; some 800 tools), and a search that comes
while it is being built suggests nothing rather than wait for it.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from votr_mcp.catalog import default_registry_path, known_servers_path, load_catalog, setup_entries
from votr_mcp.catalog.models import Catalog, Tool
from votr_mcp.errors import VotrError
from votr_mcp.index.catalog_index import build_dense
from votr_mcp.index.dense import Embedder, EmbeddingCache, FileEmbeddingCache
from votr_mcp.retrieval.pipeline import Retriever
from votr_mcp.retrieval.searcher import Searcher

__all__ = ["Suggestion", "Suggester", "default_suggester"]

log = logging.getLogger(__name__)

WARM_PART = 200
"""Tools embedded (and cached) at a time when the known servers are indexed in the background."""


@dataclass(frozen=True, slots=True)
class Suggestion:
    server: str
    tool: str
    entry: Mapping[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {"server": self.server, "tool": self.tool, "mcpServers": {self.server: dict(self.entry)}}


class Suggester:
    """Searches the known servers' catalog for requests the connected servers do not serve."""

    def __init__(self, catalog: Catalog, entries: Mapping[str, Mapping[str, Any]],
                 cache: EmbeddingCache | None = None) -> None:
        self.catalog = Catalog(t for t in catalog if t.server in entries)
        self.entries = dict(entries)
        self._names = {server: f" {_words(server)} " for server in self.entries}  # as words, read by every search
        self.cache = cache
        """Where the known tools' vectors are kept; None: the live index's."""
        self._lock = threading.Lock()
        self._retriever: Retriever | None = None
        self._dense = False

    def _searcher(self, like: Searcher, *, wait: bool = True, part: int | None = None) -> Retriever | None:
        """The retriever over the known servers, dense as soon as ``like`` (the live one) is; None
        when another thread is building it and ``wait`` is false. With ``part``, the tools are first
        embedded ``part`` at a time, each part cached as it is done (see :meth:`warm`)."""
        embedder = like.embedder if like.dense_ready else None
        built = self._retriever
        if built is not None and (embedder is None or self._dense):
            return built  # no lock once built: concurrent searches never see it as busy
        if not self._lock.acquire(blocking=wait):
            return None
        try:
            if self._retriever is None or (embedder is not None and not self._dense):
                cache = self.cache if self.cache is not None else like.cache
                if embedder is not None and cache is not None and part is not None:
                    self._embed_in_parts(embedder, cache, part)
                self._retriever = Retriever.build(self.catalog, embedder=embedder, cache=cache)
                self._dense = embedder is not None
            return self._retriever
        finally:
            self._lock.release()

    def _embed_in_parts(self, embedder: Embedder, cache: EmbeddingCache, part: int) -> None:
        chunk: list[Tool] = []
        for server in sorted(self.catalog.servers):
            chunk += [t for t in self.catalog if t.server == server]
            if len(chunk) >= part:
                build_dense(Catalog(chunk), embedder, cache)
                chunk = []

    def warm(self, like: Searcher, part: int = WARM_PART) -> None:
        """Build the retriever now, so no search waits for it (searches meanwhile suggest nothing).
        The tools are embedded ``part`` at a time, each part cached as it is done: a process stopped
        midway (a short session, a test) leaves its work to the next instead of losing it."""
        if len(self.catalog):
            self._searcher(like, part=part)

    def named(self, query: str, connected: Collection[str], found: Iterable[Tool]) -> set[str]:
        """Known servers, not connected, that ``query`` names as words ('google maps' for google-maps)
        and that no ``found`` tool mentions (by its server, name or description)."""
        words = f" {_words(query)} "
        named = {s for s, name in self._names.items() if s not in connected and name in words}
        if not named:
            return named
        mentioned = f" {' '.join(_words(f'{t.server} {t.name} {t.description}') for t in found)} "
        return {s for s in named if self._names[s] not in mentioned}

    def suggest(self, query: str, like: Searcher, connected: Collection[str],
                visible: Callable[[Tool], bool] = lambda tool: True, most: int = 2,
                only: Collection[str] | None = None) -> list[Suggestion]:
        """Up to ``most`` known servers, not connected (and among ``only`` when given), whose tools
        this request confidently finds."""
        if not len(self.catalog):
            return []
        searcher = self._searcher(like, wait=False)
        if searcher is None:
            return []  # being built in the background (warm): this search does not wait for it
        exclude = [t.key for t in self.catalog
                   if t.server in connected or (only is not None and t.server not in only) or not visible(t)]
        if len(exclude) == len(self.catalog):
            return []
        result = searcher.search(query, exclude=exclude)
        if result.abstained or not self._dense:
            return []  # without the model's evidence there is no abstention to trust: suggest nothing
        out: dict[str, Suggestion] = {}
        for hit in result.hits:
            if hit.tier in ("high", "medium") and hit.tool.server not in out:
                out[hit.tool.server] = Suggestion(hit.tool.server, hit.tool.name, self.entries[hit.tool.server])
        return list(out.values())[:most]


def default_suggester(cache_dir: Path | None = None) -> Suggester | None:
    """Known servers to suggest when nothing connected serves a request: the embedded registry's and
    the shipped known-servers/ catalog's (registry/README.md), each with the mcpServers entry to add.
    Their vectors are kept in ``cache_dir`` (the user's embedding cache) when given: the same for every
    store and config, so they are embedded once per machine; else in the live index's cache."""
    tools: list[Tool] = []
    hints: dict[str, Mapping[str, Any]] = {}
    for find in (default_registry_path, known_servers_path):
        try:
            path = find()
            catalog = load_catalog(path).catalog
        except VotrError as exc:
            log.info("server suggestions without it: %s", exc)
            continue
        found = setup_entries(path)
        new = {server: entry for server, entry in found.items() if server not in hints}  # the registry's first
        tools += [t for t in catalog if t.server in new]
        hints.update(new)
    if not hints:
        return None
    cache = FileEmbeddingCache(cache_dir) if cache_dir is not None else None
    return Suggester(Catalog(tools), hints, cache)


def _words(text: str) -> str:
    """``text`` lower-cased as words separated by single spaces (names: '-' and '_' separate words)."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))
