"""Fusion: every list's scores over all tools for one query text, and their weighted sum.

Dense cosine, BM25, TF-IDF, SPLADE and any hint lists are each cut at
``depth`` with argpartition; by default each list's top scores are rescaled to (0, 1] and summed
with weights (weighted RRF is the alternative). The lists the learned rerank reads ride along,
so nothing is scored twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray
from scipy import sparse as sp

from votr_mcp.index.catalog_index import DenseIndex, LexicalIndex
from votr_mcp.index.dense import Embedder, JointEmbedder, l2_normalise
from votr_mcp.index.text import query_dense_text
from votr_mcp.index.tokenize import tokenize
from votr_mcp.retrieval.config import RetrievalConfig
from votr_mcp.retrieval.dense_scores import DenseScores, ServerCosines, dense_scores, exact_rows
from votr_mcp.retrieval.foreign_verbs import foreign_verb
from votr_mcp.retrieval.formulas import gap_normalised, rrf, top_k
from votr_mcp.retrieval.intent import unwritten_verb
from votr_mcp.retrieval.language import is_english
from votr_mcp.retrieval.quoted import asked_words

__all__ = ["Fused", "fuse", "fused_head", "sparse_queries", "whole_vector"]


class Fused(NamedTuple):
    """One query text's scores over every tool: the fusion, and the lists the rerank reads."""

    fused: NDArray[np.float64]
    cosine: NDArray[np.float64]
    server_cosine: ServerCosines | None  # by server rows; None without a query vector
    bm25: NDArray[np.float64]
    lexical: NDArray[np.float64]  # TF-IDF cosine
    tokens: list[str]
    splade: NDArray[np.float64] | None = None  # learned sparse dot product; None when not built
    model_cosines: tuple[NDArray[np.float32], ...] = ()  # each dense model's own cosine (joint vectors)
    hidden_variance: float = 0.0  # of ``cosine`` over the catalog, not in its values (a coarse pass's)


def fuse(text: str, vec: NDArray[np.float32] | None, lexical_index: LexicalIndex, dense: DenseIndex | None,
         cfg: RetrievalConfig, allowed: NDArray[np.bool_] | None, hints: Sequence[NDArray[np.float64]],
         sparse_query: sp.csr_matrix | None = None, scored: DenseScores | None = None) -> Fused:
    """Score ``text`` with every list the config switches on and fuse them (disallowed tools score nothing).

    BM25 is always scored, since the rerank reads it; it joins the fusion only when ``cfg.bm25``.
    A request not in English (language.py) is scored by the last model of a joint vector alone,
    the multilingual one (index/models.py puts USE last): the English model's cosine is noise there.
    ``scored``: this text's dense scores when :func:`dense_scores` computed them with other texts'."""
    n = lexical_index.bm25.n_docs
    fused = np.zeros(n, dtype=np.float64)
    cos = np.zeros(n, dtype=np.float64)

    def add(scores: NDArray[np.floating], weight: float, positive_only: bool,
            among: NDArray[np.intp] | None = None) -> None:
        """Add a list cut at ``depth``; ``among``: the only rows it may list (a partition of
        100k scores cost 0.6 ms, of a thousand rows next to nothing)."""
        if weight <= 0:
            return
        s = np.asarray(scores, dtype=np.float64)
        if allowed is not None:
            s = np.where(allowed, s, -np.inf)
        order = top_k(s, cfg.depth) if among is None else among[top_k(s[among], cfg.depth)]
        order = order[s[order] > 0] if positive_only else order[np.isfinite(s[order])]
        if cfg.fusion == "rrf":
            np.add(fused, rrf(order, weight, n, cfg.rrf_k), out=fused)
        elif len(order):
            np.add.at(fused, order, weight * gap_normalised(s[order]))

    # The word-matching lists read what the request asks, not the titles and messages it quotes.
    asked = asked_words(text)
    meant = unwritten_verb(text) or (foreign_verb(text) if not is_english(text) else None)
    if meant is not None:
        asked = f"{asked} {meant}"  # "forget Bob", "lösche die Datei": the tools' texts say delete
    tokens = tokenize(asked)
    server_cos: ServerCosines | None = None
    query = vec  # (a foreign request's examples below read a scaled part of it)
    models: tuple[NDArray[np.float32], ...] = ()
    if vec is not None and dense is not None:
        scored = scored if scored is not None else dense_scores(dense, cfg, [(text, vec)])[0]
        models = scored.models
        t = scored.joint
        cos = t.astype(np.float64)
        server_cos = scored.server
        examples, owner = dense.examples, dense.example_owner
        if examples is not None and owner is not None and scored.alone is not None:
            scale = np.sqrt(np.float32(len(dense.slices)))
            examples, vec = examples[:, scored.alone] * scale, vec[scored.alone] * scale
        # The dense list ranks the tools scored exactly: an approximate score (a coarse pass's, at
        # 100k tools) is off by up to .04 and could push a true best tool out of the list.
        add(cos, cfg.w_dense, False, None if scored.approximate is None else np.flatnonzero(~scored.approximate))
        if examples is not None and owner is not None:
            # The nearest example request of each tool (Tool2Vec's mean blurs a tool's several uses).
            add(_nearest_example(examples @ vec, owner, n, stand_in=cos), cfg.w_examples, True)
    bm25 = np.asarray(lexical_index.bm25.scores(tokens), dtype=np.float64)
    lexical = lexical_index.sparse.scores(asked).astype(np.float64)  # (float32 cosines, as the index gives them)
    # Word-matching lists vote as strongly as the words match: a request written in the tools' own
    # words (TF-IDF cosine near its best) keeps their full weight, a paraphrase that shares one
    # common word ("commit", "note") with many tools barely moves the ranking.
    trust = min(1.0, float(lexical.max(initial=0.0)) / cfg.lexical_trust) if cfg.lexical_trust > 0 else 1.0
    if cfg.bm25:
        add(bm25, cfg.w_bm25 * trust, True)
    if cfg.sparse:
        add(lexical, cfg.w_sparse * trust, True)
    learned: NDArray[np.float64] | None = None
    if sparse_query is not None and dense is not None and dense.splade is not None:
        learned = dense.splade_scores(sparse_query)
        if cfg.splade:
            add(learned, cfg.w_splade * trust, True)
    for h in hints:
        add(h, cfg.w_hint, True)
    if scored is not None and scored.approximate is not None and dense is not None and query is not None:
        # What can reach the head (a tool some list ranks) is read with its exact cosine.
        listed = np.flatnonzero(fused > 0)
        exact_rows(dense, scored, query, listed)
        cos[listed] = scored.joint[listed]
    hidden = scored.hidden_variance if scored is not None and vec is not None else 0.0
    return Fused(fused, cos, server_cos, bm25, lexical, tokens, learned, models, hidden)


def _nearest_example(cosines: NDArray[np.float32], owner: NDArray[np.intp], n: int,
                     stand_in: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """Each tool's best cosine over its example requests. A tool without examples scores 0, or, given
    ``stand_in`` (its own cosine), that plus the mean gap between the others' example and own cosines."""
    best = np.full(n, -np.inf)
    np.maximum.at(best, owner, cosines.astype(np.float64))
    has = np.isfinite(best)
    if stand_in is None:
        return np.where(has, best, 0.0)
    if not has.all():
        best[~has] = stand_in[~has] + float(np.mean(best[has] - stand_in[has]))
    return best


def fused_head(f: Fused, size: int) -> NDArray[np.intp]:
    """The ``size`` best fused tools with a positive score, best first."""
    listed = np.flatnonzero(f.fused > 0)  # the few tools some list holds
    return listed[top_k(f.fused[listed], size)]


def whole_vector(needs: Sequence[str], vectors: Mapping[str, NDArray[np.float32]]) -> NDArray[np.float32]:
    """A whole task's query vector as the word-count-weighted mean of its needs' vectors.

    Embedding the whole text as well cost as much again as all the needs together (it is as long
    as they are), and on dev rows the mean served as well: MSC L3/L4 task recall .987/.709 with the
    embedded whole text, .983/.712 with the mean."""
    weights = np.array([max(len(n.split()), 1) for n in needs], dtype=np.float32)
    mean = (np.stack([vectors[n] for n in needs]) * weights[:, None]).sum(axis=0)
    return l2_normalise(mean)


def sparse_queries(embedder: Embedder | None, dense: DenseIndex | None, texts: Sequence[str]) -> dict[str, sp.csr_matrix]:
    """The unit-length learned sparse vector of each text, in one encode call, when the index has
    learned sparse tool vectors and the embedder a sparse encoder; empty otherwise."""
    if dense is None or dense.splade is None or not texts:
        return {}
    if not isinstance(embedder, JointEmbedder) or embedder.sparse is None:
        return {}
    unique = list(dict.fromkeys(texts))
    rows = embedder.sparse.encode([query_dense_text(t) for t in unique], columns=dense.splade_columns).tocsr()
    out: dict[str, sp.csr_matrix] = {}
    for i, text in enumerate(unique):
        q = rows[i]
        norm = float(np.sqrt(q.multiply(q).sum()))
        out[text] = q / norm if norm > 0 else q
    return out
