"""The index the server searches, swapped whole when the catalog changes.

A :class:`Snapshot` is immutable: the catalog, the retriever built over it and the call
names. Searches read ``LiveIndex.current`` once and use that snapshot to the end, so a swap
(one attribute assignment) never shows a search half of an old index and half of a new one.
Rebuilds run in a worker thread (re-embedding is CPU work) and one at a time, so two
list_changed notifications in a row cannot race each other.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import anyio
import anyio.to_thread

from votr_mcp.catalog import Catalog, Tool, ToolKey, call_names
from votr_mcp.retrieval.searcher import Searcher

__all__ = ["LiveIndex", "Searcher", "Snapshot"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Snapshot:
    """One consistent view: catalog, retriever over it, call names both ways."""

    catalog: Catalog
    searcher: Searcher
    version: int
    names: Mapping[ToolKey, str] = field(repr=False)
    by_name: Mapping[str, Tool] = field(repr=False)

    @classmethod
    def of(cls, catalog: Catalog, searcher: Searcher, version: int) -> Snapshot:
        # From the keys alone, and the retriever's names when it has named this catalog already: a
        # restart from the index snapshot makes a tool only when it is read (store/index_snapshot.py),
        # and naming 100k tools again took a fraction of a second of it.
        given = getattr(searcher, "call_names", None)
        if getattr(searcher, "catalog", None) is catalog and isinstance(given, Mapping) and len(given) == len(catalog):
            names: Mapping[ToolKey, str] = given
        else:
            names = call_names(catalog.tool_keys())
        return cls(catalog, searcher, version, names, ToolsByName(catalog, names))


class ToolsByName(Mapping[str, Tool]):
    """The catalog's tools by call name; a tool is read from the catalog when it is asked for."""

    def __init__(self, catalog: Catalog, names: Mapping[ToolKey, str]) -> None:
        self._catalog = catalog
        self._keys = {name: key for key, name in names.items()}

    def __getitem__(self, name: str) -> Tool:
        tool = self._catalog.get(self._keys[name])
        if tool is None:
            raise KeyError(name)
        return tool

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


class LiveIndex:
    """Holds the current :class:`Snapshot` and replaces it atomically."""

    def __init__(
        self,
        catalog: Catalog,
        searcher: Searcher,
        *,
        reindex: Callable[[Searcher, Catalog], Searcher] | None = None,
        patch: Callable[[Searcher, Sequence[Tool], Sequence[ToolKey]], Searcher | None] | None = None,
    ) -> None:
        self._current = Snapshot.of(catalog, searcher, 0)
        self._reindex = reindex or (lambda searcher, catalog: searcher.with_catalog(catalog))
        # Optional fast path for a few changed tools; None from it means "rebuild instead".
        self._patch = patch
        self._lock = anyio.Lock()
        self._listeners: list[Callable[[Snapshot], None]] = []

    @property
    def current(self) -> Snapshot:
        return self._current

    def on_swap(self, listener: Callable[[Snapshot], None]) -> None:
        """Call ``listener`` with each new snapshot (after it is live)."""
        self._listeners.append(listener)

    def _swap(self, catalog: Catalog, searcher: Searcher) -> Snapshot:
        snapshot = Snapshot.of(catalog, searcher, self._current.version + 1)
        self._current = snapshot  # the atomic step: one reference assignment
        for listener in self._listeners:
            listener(snapshot)
        return snapshot

    async def update(self, change: Callable[[Snapshot], tuple[Catalog, Searcher]]) -> Snapshot:
        """Run ``change(current)`` in a worker thread and make its (catalog, searcher) live.

        Updates run one at a time, each on the snapshot the previous one left, so no
        change is lost; searches keep using the old snapshot until the swap.
        """
        async with self._lock:
            catalog, searcher = await anyio.to_thread.run_sync(change, self._current)
            snapshot = self._swap(catalog, searcher)
        log.info("index now holds %d tools of %d servers (version %d)", len(catalog), len(catalog.servers), snapshot.version)
        return snapshot

    async def rebuild(self, catalog: Catalog) -> Snapshot:
        """Re-index ``catalog`` (the retriever re-embeds only changed tools) and swap it in."""
        return await self.update(lambda snap: (catalog, self._reindex(snap.searcher, catalog)))

    async def replace_server(self, server: str, tools: Iterable[Tool]) -> Snapshot:
        """Swap in a new tool list for one server (after list_changed or a reconnect).

        With a ``patch`` function, only the changed rows are swapped in first (fast; new words
        do not count lexically yet), then a full rebuild follows and swaps in behind it.
        """
        fresh = list(tools)
        patched = False

        def change(snap: Snapshot) -> tuple[Catalog, Searcher]:
            nonlocal patched
            catalog = Catalog([*(t for t in snap.catalog if t.server != server), *fresh])
            if self._patch is not None:
                before = {t.key: t for t in snap.catalog if t.server == server}
                after = {t.key: t for t in fresh}
                changed = [t for key, t in after.items() if before.get(key) != t]
                removed = [key for key in before if key not in after]
                quick = self._patch(snap.searcher, changed, removed)
                if quick is not None:
                    patched = True
                    return catalog, quick
            return catalog, self._reindex(snap.searcher, catalog)

        snapshot = await self.update(change)
        if patched:
            snapshot = await self.update(lambda snap: (snap.catalog, self._reindex(snap.searcher, snap.catalog)))
        return snapshot
