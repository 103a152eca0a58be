"""search_tools' hard filters (``servers``, ``categories``) and the policy's hidden tools as one mask.

Masks are built per server, not per tool: a catalog of 12,800 tools has a few hundred servers, and
each server's row in it is computed once per catalog.
"""

from __future__ import annotations

import fnmatch
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import numpy as np
from mcp.server.mcpserver.exceptions import ToolError
from numpy.typing import NDArray

from votr_mcp.catalog.models import Catalog, ToolKey

__all__ = ["SearchFilter"]


class SearchFilter:
    """Turns hidden tools, withheld tools and the request's filters into what a search excludes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cached: tuple[Catalog, list[str], NDArray[np.intp]] | None = None

    def _servers(self, catalog: Catalog) -> tuple[list[str], NDArray[np.intp]]:
        with self._lock:
            cached = self._cached
        if cached is not None and cached[0] is catalog:
            return cached[1], cached[2]
        names = list(catalog.servers)
        row = {s: i for i, s in enumerate(names)}
        codes = np.fromiter((row[t.server] for t in catalog), dtype=np.intp, count=len(catalog))
        with self._lock:
            self._cached = (catalog, names, codes)
        return names, codes

    def exclude(self, catalog: Catalog, withheld: Collection[ToolKey], hidden: NDArray[np.bool_] | None,
                servers: Sequence[str] | None, categories: Sequence[str] | None,
                tagged: Mapping[str, Sequence[str]]) -> Any:
        """``withheld`` itself when nothing else is excluded, else a boolean mask over catalog positions.
        Raises ToolError for a filter name nothing matches, naming only servers the caller may see."""
        if servers is None and categories is None and hidden is None:
            return withheld
        names, codes = self._servers(catalog)
        if categories is not None:
            known = sorted({c for cs in tagged.values() for c in cs})
            unknown = [c for c in categories if c not in known]
            if unknown:
                raise ToolError(f"'categories' names no category of the configured servers: {', '.join(repr(u) for u in unknown)}. "
                                f"Known categories: {', '.join(known) or 'none (the operator has tagged no server)'}.")
            wanted = set(categories)
            hidden = _or(hidden, _outside(names, codes, lambda s: bool(wanted.intersection(tagged.get(s, ())))))
        if servers is not None:
            seen = codes if hidden is None else codes[~hidden]
            visible = sorted(names[i] for i in np.unique(seen))
            unknown = [p for p in servers if not any(fnmatch.fnmatchcase(s, p) for s in visible)]
            if unknown:
                raise ToolError(f"'servers' names no server votr-mcp knows: {', '.join(repr(u) for u in unknown)}. "
                                f"Known servers: {', '.join(visible) or 'none'}.")
            hidden = _or(hidden, _outside(names, codes, lambda s: any(fnmatch.fnmatchcase(s, p) for p in servers)))
        assert hidden is not None
        mask = hidden.copy()
        for key in withheld:
            pos = catalog.position(key)
            if pos is not None:
                mask[pos] = True
        if mask.all():
            raise ToolError("no tool is left to search: the 'servers'/'categories' filters and your access leave none; widen them.")
        return mask


def _outside(names: Sequence[str], codes: NDArray[np.intp], keep: Callable[[str], bool]) -> NDArray[np.bool_]:
    kept = np.array([keep(s) for s in names], dtype=bool)
    return ~kept[codes]


def _or(a: NDArray[np.bool_] | None, b: NDArray[np.bool_]) -> NDArray[np.bool_]:
    return b if a is None else (a | b)
