"""What a search may return and what the agent hinted, as arrays over the catalog: the tools a search
must leave out (by key or by mask) and one score list per intent hint (``server_intent``, ``tool_intent``)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from votr_mcp.catalog.models import Catalog, ToolKey
from votr_mcp.errors import RetrievalError
from votr_mcp.index.catalog_index import DenseIndex, LexicalIndex
from votr_mcp.index.tokenize import content_tokens, tokenize
from votr_mcp.retrieval.formulas import dice, near_best

__all__ = ["Exclude", "allowed_mask", "hint_scores"]

Exclude = Collection[ToolKey] | NDArray[np.bool_]
"""Tools a search must not return: keys, or a boolean mask over catalog positions."""


def allowed_mask(exclude: Exclude, catalog: Catalog) -> NDArray[np.bool_] | None:
    """True for each catalog position a search may return; None when every tool may be."""
    if isinstance(exclude, np.ndarray):
        if exclude.shape != (len(catalog),):
            raise RetrievalError(f"exclude mask has shape {exclude.shape}; it needs one entry per catalog tool ({len(catalog)})")
        return ~exclude.astype(bool)
    if not exclude:
        return None
    allowed = np.ones(len(catalog), dtype=bool)
    for key in exclude:
        pos = catalog.position(key)
        if pos is not None:
            allowed[pos] = False
    return allowed


def hint_scores(server_intent: str | None, tool_intent: str | None, vectors: Mapping[str, NDArray[np.float32]],
                lexical: LexicalIndex, dense: DenseIndex | None, server_name_tokens: Sequence[set[str]],
                server_of: NDArray[np.intp]) -> list[NDArray[np.float64]]:
    """One score list over tools per hint given (a hint's own vector in ``vectors`` when embedded): a
    server hint scores each tool by its server's name and texts, a tool hint by BM25 and the tool's vector."""
    out: list[NDArray[np.float64]] = []
    if server_intent:
        hint_tokens = content_tokens(server_intent)
        per_server = np.array([dice(hint_tokens, s) for s in server_name_tokens])
        vec = vectors.get(server_intent)
        if dense is not None and vec is not None:
            per_server = per_server + np.maximum(dense.server_description @ vec, dense.server_summary @ vec)
        out.append(near_best(per_server)[server_of])
    if tool_intent:
        score = lexical.bm25.scores(tokenize(tool_intent))
        score = score / score.max() if score.max() > 0 else score
        vec = vectors.get(tool_intent)
        if dense is not None and vec is not None:
            score = score + dense.tools @ vec
        out.append(near_best(score))
    return out
