"""The indexes of one catalog: lexical (BM25 + TF-IDF) and dense (tool and server vectors).

Both are immutable once built; a changed catalog gets new indexes (dense vectors come back
from the embedding cache for every tool whose text did not change).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse as sp

from votr_mcp.catalog.models import Catalog, Tool
from votr_mcp.index.bm25 import BM25Index
from votr_mcp.index.coarse import COARSE_TOOLS, CoarsePass
from votr_mcp.index.dense import Embedder, EmbeddingCache, JointEmbedder, SparseEncoder, embed_cached, l2_normalise
from votr_mcp.index.frames import fact_frame
from votr_mcp.index.known_examples import examples_of
from votr_mcp.index.sparse import SparseIndex, postings_sum
from votr_mcp.index.splade import DOC_TERMS, DOC_TOKENS, pack, unpack_rows
from votr_mcp.index.text import server_texts, tool_dense_text, tool_lexical_text, tool_splade_text
from votr_mcp.index.tokenize import tokenize

__all__ = ["LexicalIndex", "DenseIndex", "build_lexical", "build_dense", "dense_texts", "restack_lexical", "restack_dense"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LexicalIndex:
    bm25: BM25Index
    sparse: SparseIndex


@dataclass(frozen=True, slots=True)
class DenseIndex:
    """Row i of ``tools`` is tool i of the catalog; ``server_of[i]`` its row in the server matrices.

    The Tool2Vec matrix (:meth:`tool2vec_matrix`) replaces a tool's vector by the mean of its
    description vector and its example queries' vectors when it has examples: it is ``tools_t2v``
    with rows ``t2v_rows`` replaced by ``t2v_vectors``. A built index keeps ``tools_t2v`` as
    ``tools`` itself and only the few rows of tools with examples apart (at 100k tools a second
    matrix cost 342 MB for a few hundred rows); a learned one (votr_mcp.learning) holds a whole matrix.
    """

    model_id: str
    tools: NDArray[np.float32]
    tools_t2v: NDArray[np.float32]
    server_description: NDArray[np.float32]
    server_summary: NDArray[np.float32]
    server_of: NDArray[np.intp]
    slices: tuple[slice, ...] = ()  # each model's columns when the vectors are a JointEmbedder's
    t2v_rows: NDArray[np.intp] | None = None  # rows whose Tool2Vec vector is not ``tools_t2v``'s
    t2v_vectors: NDArray[np.float32] | None = None  # their Tool2Vec vectors
    # Learned sparse tool vectors over the vocabulary terms some tool has (``splade_columns``; a
    # query needs no other), kept by column: a query's few terms read only their tools (postings),
    # where a product over every row read all 9M entries at 100k tools (eval/SCALE.md).
    splade: sp.csc_matrix | None = None
    splade_norms: NDArray[np.float64] | None = None  # each tool's learned sparse vector length
    splade_columns: NDArray[np.intp] | None = None  # column j of ``splade`` is vocabulary term splade_columns[j]
    splade_vocabulary: int = 0  # the encoder's vocabulary size
    examples: NDArray[np.float32] | None = None  # each example query's vector (rows of every tool's examples)
    example_owner: NDArray[np.intp] | None = None  # the tool row each example belongs to
    coarse: CoarsePass | None = None  # of ``tools``, from COARSE_TOOLS tools (index/coarse.py)

    @classmethod
    def learned_sparse(cls, splade: sp.csr_matrix | None) -> dict[str, object]:
        """The learned-sparse fields of an index over these tool rows (``splade``: rows x vocabulary)."""
        if splade is None:
            return {"splade": None}
        columns = np.unique(splade.indices).astype(np.intp)
        return {"splade": splade[:, columns].tocsc(), "splade_columns": columns, "splade_vocabulary": splade.shape[1],
                "splade_norms": np.sqrt(np.asarray(splade.multiply(splade).sum(axis=1)).ravel())}

    def tool2vec_matrix(self, copy: bool = False) -> NDArray[np.float32]:
        """The Tool2Vec matrix (a new array when rows are replaced, or ``copy``)."""
        if self.t2v_rows is None or not len(self.t2v_rows):
            return self.tools_t2v.copy() if copy else self.tools_t2v
        out = self.tools_t2v.copy()
        out[self.t2v_rows] = self.t2v_vectors
        return out

    def tool2vec_rows(self, rows: NDArray[np.intp]) -> NDArray[np.float32]:
        """Some rows of the Tool2Vec matrix, without making it."""
        out = self.tools_t2v[rows]
        if self.t2v_rows is not None and len(self.t2v_rows):
            assert self.t2v_vectors is not None
            where = {int(r): i for i, r in enumerate(self.t2v_rows)}
            for j, r in enumerate(rows):
                if int(r) in where:
                    out[j] = self.t2v_vectors[where[int(r)]]
        return out

    def splade_rows(self) -> sp.csr_matrix | None:
        """The learned sparse tool vectors as rows over the whole vocabulary (what :meth:`learned_sparse` read)."""
        if self.splade is None or self.splade_columns is None:
            return None
        rows = self.splade.tocsr()
        return sp.csr_matrix((rows.data, self.splade_columns[rows.indices], rows.indptr),
                             shape=(rows.shape[0], self.splade_vocabulary))

    def splade_scores(self, query: sp.csr_matrix) -> NDArray[np.float64]:
        """Every tool's dot product with a query's learned sparse row (over ``splade_columns``)."""
        assert self.splade is not None
        return postings_sum(self.splade, query.indices, query.data)


EXAMPLE_COVERAGE = 0.5
"""The share of a catalog's tools that must have example requests for the nearest-example list.
MCP-Zero lends registry examples to a few dozen of its tools: the list there moved test top-1
.829 -> .815, by moving tools in and out of the dense list's weight rather than by the examples."""


def indexed_examples(tool: Tool) -> tuple[str, ...]:
    """The example requests embedded for a tool: its examples (index.known_examples), then the frames
    of those that keep a fact (index.frames), which a request keeping another fact matches. The
    frames are on the nearest-example list only: the tool's vector (Tool2Vec) is its examples' mean."""
    own = examples_of(tool)
    return own + tuple(f for e in own for f in [fact_frame(e)] if f is not None)


def build_lexical(catalog: Catalog) -> LexicalIndex:
    texts = [tool_lexical_text(t) for t in catalog]
    tokens = [tokenize(t) for t in texts]
    return LexicalIndex(BM25Index(tokens), SparseIndex(texts, tokens))


def dense_texts(catalog: Catalog) -> list[str]:
    """Every text build_dense embeds, in its order: tools, server descriptions, server summaries,
    then example queries (Tool2Vec). A store can pre-embed exactly these."""
    pairs = [server_texts(s) for s in catalog.servers.values()]
    return ([tool_dense_text(t) for t in catalog] + [p[0] for p in pairs] + [p[1] for p in pairs]
            + [e for t in catalog for e in indexed_examples(t)])


def build_dense(catalog: Catalog, embedder: Embedder, cache: EmbeddingCache | None) -> DenseIndex:
    """Embed every tool, server and example text of the catalog in one (cached) batch."""
    servers = list(catalog.servers.values())
    server_row = {s.name: i for i, s in enumerate(servers)}
    texts: Sequence[str] = dense_texts(catalog)
    vectors = embed_cached(embedder, texts, cache)
    n, m = len(catalog), len(servers)
    example_texts = texts[n + 2 * m :]
    tools = vectors[:n]
    slices, splade = _joint_parts(catalog, embedder, cache)
    owners: list[int] = []
    t2v_rows: list[int] = []
    t2v_vectors: list[NDArray[np.float32]] = []
    if example_texts:
        offset = n + 2 * m
        for i, tool in enumerate(catalog):
            own = indexed_examples(tool)
            if own:
                examples = vectors[offset : offset + len(own)]
                offset += len(own)
                t2v_rows.append(i)
                t2v_vectors.append(l2_normalise(tools[i] + examples[: len(examples_of(tool))].mean(axis=0)))
                owners += [i] * len(own)
    tools = np.ascontiguousarray(tools)
    return DenseIndex(
        model_id=embedder.model_id,
        tools=tools,
        tools_t2v=tools,
        **_tool2vec_fields(t2v_rows, t2v_vectors, tools.shape[1]),
        server_description=np.ascontiguousarray(vectors[n : n + m]),
        server_summary=np.ascontiguousarray(vectors[n + m : n + 2 * m]),
        server_of=np.fromiter((server_row[t.server] for t in catalog), dtype=np.intp, count=n),
        slices=slices,
        coarse=CoarsePass.fit(tools, slices or (slice(None),)) if n >= COARSE_TOOLS else None,
        **_example_fields(vectors[n + 2 * m :], owners, n),
        **DenseIndex.learned_sparse(splade),  # type: ignore[arg-type]
    )


def _restacked_coarse(old: DenseIndex, tools: NDArray[np.float32], keep: NDArray[np.intp]) -> CoarsePass | None:
    """The coarse pass of a restacked index: the old one's directions, kept rows reused (a one-tool
    change at 100k tools projects one row); fitted anew when the catalog grows past COARSE_TOOLS."""
    if len(tools) < COARSE_TOOLS:
        return None
    parts = old.slices or (slice(None),)
    return old.coarse.restacked(keep, tools, parts) if old.coarse is not None else CoarsePass.fit(tools, parts)


def _tool2vec_fields(rows: Sequence[int], vectors: Sequence[NDArray[np.float32]], dim: int) -> dict[str, Any]:
    if not rows:
        return {"t2v_rows": None, "t2v_vectors": None}
    return {"t2v_rows": np.asarray(rows, dtype=np.intp),
            "t2v_vectors": np.ascontiguousarray(np.stack(vectors).astype(np.float32).reshape(len(rows), dim))}


def _example_fields(vectors: NDArray[np.float32], owners: Sequence[int], n: int) -> dict[str, Any]:
    """The example-request fields of a dense index over ``n`` tools: None unless at least
    :data:`EXAMPLE_COVERAGE` of the tools have examples (a list only some tools can be on favours them)."""
    if not len(owners) or len(set(owners)) < EXAMPLE_COVERAGE * n:
        return {"examples": None, "example_owner": None}
    return {"examples": np.ascontiguousarray(vectors[: len(owners)]), "example_owner": np.asarray(owners, dtype=np.intp)}


def _joint_parts(catalog: Catalog, embedder: Embedder,
                 cache: EmbeddingCache | None) -> tuple[tuple[slice, ...], sp.csr_matrix | None]:
    """A joint embedder's column slices, and its learned sparse tool vectors (cached as packed rows)."""
    if not isinstance(embedder, JointEmbedder):
        return (), None
    splade = splade_rows(embedder.sparse, [tool_splade_text(t) for t in catalog], cache) if embedder.sparse else None
    return tuple(embedder.slices), splade


class _PackedSparse:
    """A sparse encoder seen as an Embedder of packed rows, so the embedding cache keeps its vectors."""

    def __init__(self, encoder: SparseEncoder) -> None:
        self.encoder = encoder
        self.model_id = f"{encoder.model_id}/top{DOC_TERMS}"

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        rows = self.encoder.encode(texts, limit=DOC_TOKENS)
        return np.stack([pack(rows[i]) for i in range(rows.shape[0])]) if len(texts) else np.zeros((0, 2 * DOC_TERMS), np.float32)


def splade_rows(encoder: SparseEncoder, texts: Sequence[str], cache: EmbeddingCache | None) -> sp.csr_matrix:
    """Learned sparse vectors of ``texts`` (CSR, rows × vocabulary), encoding only what the cache lacks."""
    if not texts:
        return sp.csr_matrix((0, encoder.vocabulary_size), dtype=np.float32)
    return unpack_rows(embed_cached(_PackedSparse(encoder), texts, cache), encoder.vocabulary_size)


Rows = Sequence["int | None"]
"""For each tool of a new catalog: its row in the old index, or None when it is new or changed."""


def restack_lexical(old: LexicalIndex, catalog: Catalog, rows: Rows) -> LexicalIndex:
    """Lexical indexes for ``catalog`` reusing old rows; new rows use the old vocabulary and idf."""
    texts = [tool_lexical_text(t) if r is None else None for t, r in zip(catalog, rows)]
    bm25 = old.bm25.restack([r if r is not None else tokenize(x or "") for r, x in zip(rows, texts)])
    sparse = old.sparse.restack([r if r is not None else (x or "") for r, x in zip(rows, texts)])
    return LexicalIndex(bm25, sparse)


def restack_dense(old: DenseIndex, catalog: Catalog, rows: Rows, embedder: Embedder, cache: EmbeddingCache | None) -> DenseIndex:
    """Dense vectors for ``catalog`` reusing old tool rows; new tools and all server texts come from
    the cache (embedded only when missing)."""
    fresh = [t for t, r in zip(catalog, rows) if r is None]
    servers = list(catalog.servers.values())
    pairs = [server_texts(s) for s in servers]
    example_texts = [e for t in fresh for e in indexed_examples(t)]
    texts = [tool_dense_text(t) for t in fresh] + [p[0] for p in pairs] + [p[1] for p in pairs] + example_texts
    vectors = embed_cached(embedder, texts, cache) if texts else np.zeros((0, old.tools.shape[1]), dtype=np.float32)
    keep = np.array([r if r is not None else -1 for r in rows], dtype=np.intp)
    tools = old.tools[np.maximum(keep, 0)]
    new_rows = np.flatnonzero(keep < 0)
    tools[new_rows] = vectors[: len(fresh)]
    # The Tool2Vec rows kept (as a built index holds them: apart from the shared matrix), then the new ones.
    shared = old.tools_t2v is old.tools
    t2v = tools if shared else old.tools_t2v[np.maximum(keep, 0)]
    if not shared:
        t2v[new_rows] = vectors[: len(fresh)]
    new_row = {int(r): i for i, r in enumerate(keep) if r >= 0}
    t2v_rows: list[int] = []
    t2v_vectors: list[NDArray[np.float32]] = []
    if shared and old.t2v_rows is not None and old.t2v_vectors is not None:
        for r, v in zip(old.t2v_rows, old.t2v_vectors):
            if int(r) in new_row:
                t2v_rows.append(new_row[int(r)])
                t2v_vectors.append(v)
    offset = len(fresh) + 2 * len(servers)
    kept_vectors, kept_owners = _kept_examples(old, keep)
    new_owners: list[int] = []
    for row, tool in zip(new_rows, fresh):
        own = indexed_examples(tool)
        if own:
            vec = l2_normalise(tools[row] + vectors[offset : offset + len(examples_of(tool))].mean(axis=0))
            if shared:
                t2v_rows.append(int(row))
                t2v_vectors.append(vec)
            else:
                t2v[row] = vec
            offset += len(own)
            new_owners += [int(row)] * len(own)
    order = np.argsort(t2v_rows, kind="stable")
    example_vectors = np.concatenate([kept_vectors, vectors[len(fresh) + 2 * len(servers):]]).astype(np.float32)
    m = len(servers)
    server_row = {s.name: i for i, s in enumerate(servers)}
    splade = old.splade_rows()
    if splade is not None and isinstance(embedder, JointEmbedder) and embedder.sparse is not None:
        new = splade_rows(embedder.sparse, [tool_splade_text(t) for t in fresh], cache)
        # The kept rows, then the new ones, put in catalog order by one row index (a row at a time
        # took 6 s at 100k tools).
        stacked = sp.vstack([splade[np.maximum(keep[keep >= 0], 0)], new], format="csr")
        place = np.empty(len(rows), dtype=np.intp)
        place[keep >= 0] = np.arange(int((keep >= 0).sum()))
        place[keep < 0] = int((keep >= 0).sum()) + np.arange(len(new_rows))
        splade = stacked[place]
    return DenseIndex(
        model_id=old.model_id,
        tools=tools,
        tools_t2v=t2v,
        **_tool2vec_fields([t2v_rows[i] for i in order], [t2v_vectors[i] for i in order], tools.shape[1]),
        server_description=np.ascontiguousarray(vectors[len(fresh) : len(fresh) + m]),
        server_summary=np.ascontiguousarray(vectors[len(fresh) + m : len(fresh) + 2 * m]),
        server_of=np.fromiter((server_row[t.server] for t in catalog), dtype=np.intp, count=len(catalog)),
        slices=old.slices,
        coarse=_restacked_coarse(old, tools, keep),
        **_example_fields(example_vectors, [*kept_owners, *new_owners], len(catalog)),
        **DenseIndex.learned_sparse(splade),  # type: ignore[arg-type]
    )


def _kept_examples(old: DenseIndex, keep: NDArray[np.intp]) -> tuple[NDArray[np.float32], list[int]]:
    """The old index's example vectors of the tools kept, with their new rows as owners."""
    if old.examples is None or old.example_owner is None:
        return np.zeros((0, old.tools.shape[1]), dtype=np.float32), []
    new_row = {int(r): i for i, r in enumerate(keep) if r >= 0}
    take = [j for j, owner in enumerate(old.example_owner) if int(owner) in new_row]
    return old.examples[take], [new_row[int(old.example_owner[j])] for j in take]
