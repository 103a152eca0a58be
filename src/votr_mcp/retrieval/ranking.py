"""How the Retriever ranks one text (:mod:`votr_mcp.retrieval.pipeline`): every list fused, the learned
rerank of the head, the bounded adjustment from use, what the request says outright, and the evidence
abstention reads. A base class of the Retriever, apart from its lifecycle and its whole-search flow."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.typing import NDArray
from scipy import sparse as sp

from votr_mcp.index.tokenize import stem
from votr_mcp.retrieval.dense_scores import DenseScores, dense_scores, exact_rows
from votr_mcp.retrieval.everyday import EVERYDAY_FORMS, everyday_operation
from votr_mcp.retrieval.evidence import SUPPORT_DEPTH, evidence
from votr_mcp.retrieval.features import Ranking, by_request
from votr_mcp.retrieval.fusion import Fused, fuse, fused_head, sparse_queries
from votr_mcp.retrieval.knowledge import OPERATION_FORMS, asked_of_assistant
from votr_mcp.retrieval.rerank import GROUPS, QueryView, head_features
from votr_mcp.retrieval.services import service_offered
from votr_mcp.retrieval.verbs import LITERAL_OPERATIONS, OFFERED_BY_OBJECT, verb_forms

if TYPE_CHECKING:
    from votr_mcp.catalog.models import Catalog
    from votr_mcp.index.catalog_index import DenseIndex, LexicalIndex
    from votr_mcp.index.dense import Embedder
    from votr_mcp.retrieval.config import RetrievalConfig
    from votr_mcp.retrieval.features import ToolFeatures
    from votr_mcp.retrieval.query_adapter import Adapts
    from votr_mcp.retrieval.rerank import RerankModel

__all__ = ["Adjust", "Scored", "TextRanker"]

Adjust = Callable[[str, "NDArray[np.float32] | None", NDArray[np.intp], NDArray[np.float64]], NDArray[np.float64]]
"""A bounded change of a ranking's head scores from outside retrieval, given the ranked text, its
query vector (None when dense is off), the head's catalog rows and their scores (best 1): learning
from use (:mod:`votr_mcp.learning`) reorders near-ties, lifts tools a request like this one was
served by with it, and sinks tools that failed for a request near-identical to it."""


class Scored(NamedTuple):
    """One text's dense scores as a search ranks it (:meth:`TextRanker._dense_scores`)."""

    ranked: DenseScores  # the scores of ``vector``, which the dense list ranks by
    vector: NDArray[np.float32]  # the query vector, after the query adapter when it applied
    unadapted: DenseScores | None = None  # the scores before the adapter, when it changed the vector


class TextRanker:
    """Ranking one text over the catalog; the Retriever holds the indexes and models it reads."""

    catalog: Catalog
    config: RetrievalConfig
    embedder: Embedder | None
    rerank: RerankModel | None
    adapter: Adapts | None
    adjust: Adjust | None = None  # set by Retriever.with_learning only
    _lexical: LexicalIndex
    _dense: DenseIndex | None
    _features: ToolFeatures
    _server_of: NDArray[np.intp]

    if TYPE_CHECKING:  # the abstention's request-level features (retrieval/abstention.py)
        def _chat_similarity(self, text: str, vec: NDArray[np.float32] | None) -> float: ...
        def _tool_request(self, vec: NDArray[np.float32] | None) -> float: ...

    @property
    def _splade_norms(self) -> NDArray[np.float64] | None:
        """Each tool's learned-sparse vector length (for the evidence's sparse cosine)."""
        return self._dense.splade_norms if self._dense is not None else None

    def _head_features(self, view: QueryView, f: Fused, head: NDArray[np.intp]) -> NDArray[np.float64]:
        n = len(head)
        return head_features(view, [self._features.views[i] for i in head], self._features.bulk[head],
                             fused=f.fused[head], cosine=f.cosine[head],
                             server_cosine=f.server_cosine[self._server_of[head]] if f.server_cosine is not None else np.zeros(n),
                             bm25=f.bm25[head], tfidf=f.lexical[head],
                             use_cosine=f.model_cosines[-1][head] if f.model_cosines else None,
                             splade=f.splade[head] / max(float(f.splade.max()), 1e-9) if f.splade is not None else None)

    def _verb_offered(self, text: str, view: QueryView, ranked: NDArray[np.intp]) -> bool:
        """False when an English request leads with a specific operation (verbs.LITERAL_OPERATIONS)
        that none of the first ranked tools (evidence.SUPPORT_DEPTH of ``ranked``) names in its
        indexed words, in any of its forms ("book" or "reserve"): what this search hands on cannot
        do it, whatever else matches, and a tool that does it deep in a big catalog is not among
        what it hands on. Booking is offered too by a tool of the catalog that names what is booked
        (verbs.OFFERED_BY_OBJECT: a flight search serves "book a flight to Dubai"). A request the
        assistant answers from what it knows (knowledge.asked_of_assistant: a meaning, a difference,
        a translation, a synonym, a poem or a joke), or a phone or a home does
        (everyday.everyday_operation: an alarm, a timer, a lamp, the weather), is offered by a
        first ranked tool naming that."""
        verb, vocabulary = view.verb, self._lexical.bm25.vocab
        head = ranked[:SUPPORT_DEPTH]

        def named(forms: Iterable[str]) -> bool:
            return self._lexical.bm25.named_in({stem(f) for f in forms}, head)

        asked = asked_of_assistant(text, view.values)  # read in six languages: its patterns say which
        if asked is not None:
            return named(OPERATION_FORMS[asked])
        everyday = everyday_operation(text)
        if everyday is not None:
            return named(EVERYDAY_FORMS[everyday])
        if verb is None or verb not in LITERAL_OPERATIONS or not view.english:
            return True
        if verb in OFFERED_BY_OBJECT and any(o in vocabulary for o in view.objects):
            return True
        # or its example requests lead with it ("undo git add" of a tool that "unstages" changes)
        return named(verb_forms(verb)) or any(verb in self._features.views[int(i)].does for i in head)

    def _adapted(self, text: str, vec: NDArray[np.float32]) -> NDArray[np.float32]:
        """The query vector the dense list reads: corrected by the query adapter when it is on and
        was fit for this embedding model (else ``vec`` itself)."""
        a = self.adapter
        if a is None or not self.config.query_adapter or self._dense is None or a.model_id != self._dense.model_id:
            return vec
        return a.adapt(text, vec)

    def _unadapted(self, f: Fused, scored: Scored | None, vec: NDArray[np.float32] | None,
                   ranked: NDArray[np.intp]) -> Fused:
        """``f`` with the cosines of the query vector before the query adapter, which abstention's
        evidence reads: the adapter is fit to move answerable requests near their tools, and the
        cosine it gives a request no tool serves is not the one the calibration's null requests had
        (query_adapter.py: what that cost no-tool abstention)."""
        raw = scored.unadapted if scored is not None else None
        if raw is None or vec is None or self._dense is None:
            return f
        exact_rows(self._dense, raw, vec, ranked)  # (the rows evidence reads, exact where a coarse pass ran)
        return f._replace(cosine=raw.joint.astype(np.float64), model_cosines=raw.models,
                          hidden_variance=raw.hidden_variance)

    def _sparse_queries(self, texts: Sequence[str]) -> dict[str, sp.csr_matrix]:
        """Each text's unit-length learned sparse vector (:func:`sparse_queries`); empty when off."""
        if not self.config.splade:
            return {}
        return sparse_queries(self.embedder, self._dense, texts)

    def _dense_scores(self, queries: Sequence[tuple[str, NDArray[np.float32] | None]],
                      adapt: bool = True) -> dict[str, Scored]:
        """The dense scores of several texts at once (:func:`dense_scores`: one pass over the tool
        matrix for them all), by text; empty when dense is off. ``adapt``: rank by the query
        adapter's vectors (when it is on); the unadapted vectors are scored in the same pass."""
        given = {t: v for t, v in queries if v is not None}
        if self._dense is None or not self.config.dense or not given:
            return {}
        adapted = {t: self._adapted(t, v) if adapt else v for t, v in given.items()}
        changed = [t for t in given if adapted[t] is not given[t]]
        scores = dense_scores(self._dense, self.config, [*adapted.items(), *((t, given[t]) for t in changed)])
        unadapted = dict(zip(changed, scores[len(given):]))
        return {t: Scored(s, adapted[t], unadapted.get(t)) for t, s in zip(given, scores)}

    def _rank(self, text: str, vec: NDArray[np.float32] | None, allowed: NDArray[np.bool_] | None,
              hints: Sequence[NDArray[np.float64]], rerank: bool = True,
              sparse: Mapping[str, sp.csr_matrix] | None = None, scored: Scored | None = None) -> Ranking:
        cfg = self.config
        if vec is not None and (sparse is None or text not in sparse):
            sparse = self._sparse_queries([text])
        if vec is not None and scored is None:
            scored = self._dense_scores([(text, vec)]).get(text)
        f = fuse(text, scored.vector if scored is not None else vec, self._lexical, self._dense, cfg, allowed, hints,
                 sparse.get(text) if vec is not None and sparse is not None else None,
                 scored.ranked if scored is not None else None)
        reranking = rerank and cfg.rerank and self.rerank is not None
        head = fused_head(f, max(cfg.rerank_head if reranking else 0, cfg.ranked_size))
        if len(head) == 0:
            return Ranking(head, np.zeros(0), np.zeros(0), np.zeros(0))
        scores = f.fused[head]
        view = QueryView.of(text, f.tokens)  # what the rerank and the evidence read of the request
        if reranking:
            assert self.rerank is not None
            s = self.rerank.score(self._head_features(view, f, head), off=[g for g in GROUPS if not getattr(cfg, g)])
            for h in hints:  # an explicit hint from the agent still outweighs what the rerank reads
                best = float(h.max())
                if best > 0:
                    s = s + cfg.w_hint * h[head] / best
            scores = np.exp(s - s.max())  # (0, 1], best 1: the rerank's softmax mass relative to its top
        if self.adjust is not None:
            scores = self.adjust(text, vec, head, scores)
        order = np.argsort(-scores, kind="stable")[: cfg.ranked_size]
        ranked = by_request(text, head[order], self._features, self._server_of, cfg, allowed)
        ranked_scores = scores[order][: len(ranked)]
        if len(ranked) > len(ranked_scores):  # a named tool from outside the head: it leads at the best score
            ranked_scores = np.r_[ranked_scores[:1], ranked_scores][: len(ranked)]
        found = evidence(self._unadapted(f, scored, vec, ranked), ranked, view, self._features.views, self._splade_norms,
                         self._chat_similarity(text, vec), self._tool_request(vec), self._verb_offered(text, view, ranked),
                         self._features.servers.supports(text, view),
                         service_offered(text, view.verb, self._lexical.bm25.together)) if vec is not None else {}
        return Ranking(ranked, ranked_scores, f.cosine[ranked], f.lexical[ranked], found)
