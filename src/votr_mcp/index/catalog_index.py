"""The indexes of one catalog: lexical (BM25 + TF-IDF) and dense (tool and server vectors).

Both are immutable once built; a changed catalog gets new indexes (dense vectors come back
from the embedding cache for every tool whose text did not change).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from votr_mcp.catalog.models import Catalog
from votr_mcp.index.bm25 import BM25Index
from votr_mcp.index.dense import Embedder, EmbeddingCache, embed_cached, l2_normalise
from votr_mcp.index.sparse import SparseIndex
from votr_mcp.index.text import server_texts, tool_dense_text, tool_lexical_text
from votr_mcp.index.tokenize import tokenize

__all__ = ["LexicalIndex", "DenseIndex", "build_lexical", "build_dense", "dense_texts"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LexicalIndex:
    bm25: BM25Index
    sparse: SparseIndex


@dataclass(frozen=True, slots=True)
class DenseIndex:
    """Row i of ``tools`` is tool i of the catalog; ``server_of[i]`` its row in the server matrices.

    ``tools_t2v`` replaces a tool's vector by the mean of its description vector and its example
    queries' vectors when it has examples (Tool2Vec); it is ``tools`` itself when none has.
    """

    model_id: str
    tools: NDArray[np.float32]
    tools_t2v: NDArray[np.float32]
    server_description: NDArray[np.float32]
    server_summary: NDArray[np.float32]
    server_of: NDArray[np.intp]


def build_lexical(catalog: Catalog) -> LexicalIndex:
    texts = [tool_lexical_text(t) for t in catalog]
    return LexicalIndex(BM25Index([tokenize(t) for t in texts]), SparseIndex(texts))


def dense_texts(catalog: Catalog) -> list[str]:
    """Every text build_dense embeds, in its order: tools, server descriptions, server summaries,
    then example queries (Tool2Vec). A store can pre-embed exactly these."""
    pairs = [server_texts(s) for s in catalog.servers.values()]
    return ([tool_dense_text(t) for t in catalog] + [p[0] for p in pairs] + [p[1] for p in pairs]
            + [e for t in catalog for e in t.examples])


def build_dense(catalog: Catalog, embedder: Embedder, cache: EmbeddingCache | None) -> DenseIndex:
    """Embed every tool, server and example text of the catalog in one (cached) batch."""
    servers = list(catalog.servers.values())
    server_row = {s.name: i for i, s in enumerate(servers)}
    texts: Sequence[str] = dense_texts(catalog)
    vectors = embed_cached(embedder, texts, cache)
    n, m = len(catalog), len(servers)
    example_texts = texts[n + 2 * m :]
    tools = vectors[:n]
    t2v = tools
    if example_texts:
        t2v = tools.copy()
        offset = n + 2 * m
        for i, tool in enumerate(catalog):
            if tool.examples:
                examples = vectors[offset : offset + len(tool.examples)]
                offset += len(tool.examples)
                t2v[i] = l2_normalise(tools[i] + examples.mean(axis=0))
    return DenseIndex(
        model_id=embedder.model_id,
        tools=np.ascontiguousarray(tools),
        tools_t2v=np.ascontiguousarray(t2v),
        server_description=np.ascontiguousarray(vectors[n : n + m]),
        server_summary=np.ascontiguousarray(vectors[n + m : n + 2 * m]),
        server_of=np.fromiter((server_row[t.server] for t in catalog), dtype=np.intp, count=n),
    )
