"""The Retriever: hybrid retrieval over one catalog, a learned head rerank, adaptive k and abstention.

Per query (and per need of a whole-task query): dense cosine, BM25 and TF-IDF scores over all
tools as numpy vectors; each list is cut at ``depth`` with argpartition and fused (by default
each list's top scores are rescaled to (0, 1] and summed with weights; weighted RRF is the
alternative; :mod:`votr_mcp.retrieval.fusion`); the learned rerank (:mod:`votr_mcp.retrieval.rerank`)
reorders the fused head; :mod:`votr_mcp.retrieval.handoff` turns the ranked list into k hand-offs
by the calibration, or an abstention.
A whole task's lists (its whole query's and each need's) are merged by :mod:`votr_mcp.retrieval.merge`.
This module holds the Retriever's lifecycle (build, swaps, models) and the flow of one search; how it
ranks one text is :mod:`votr_mcp.retrieval.ranking`, its abstention bar :mod:`votr_mcp.retrieval.abstention`.
Hierarchical server→tool fusion lost on dev rows and stays switchable for ablations, off by default."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import NDArray

from votr_mcp.catalog.models import Catalog, Tool, ToolKey
from votr_mcp.catalog.naming import call_names
from votr_mcp.errors import RetrievalError
from votr_mcp.index.catalog_index import DenseIndex, LexicalIndex, build_dense, build_lexical, restack_dense, restack_lexical
from votr_mcp.index.dense import Embedder, EmbeddingCache, MemoryEmbeddingCache, embed_cached
from votr_mcp.index.frames import fact_frame, with_frame
from votr_mcp.index.text import query_dense_text
from votr_mcp.index.tokenize import content_tokens
from votr_mcp.retrieval.abstention import NullRequests
from votr_mcp.retrieval.calibration import Calibration, shipped_calibration
from votr_mcp.retrieval.config import RetrievalConfig
from votr_mcp.retrieval.features import Ranking, ToolFeatures
from votr_mcp.retrieval.fusion import fuse, fused_head, whole_vector
from votr_mcp.retrieval.handoff import HandOff
from votr_mcp.retrieval.merge import cohere_needs, merge_task
from votr_mcp.retrieval.needs import and_halves, split_needs
from votr_mcp.retrieval.query_adapter import Adapts, shipped_adapter
from votr_mcp.retrieval.ranking import Adjust
from votr_mcp.retrieval.rerank import QueryView, RerankModel, shipped_rerank
from votr_mcp.retrieval.result import SearchResult
from votr_mcp.retrieval.scope import Exclude, allowed_mask, hint_scores
from votr_mcp.retrieval.tool_request import RequestModel, shipped_request_model

__all__ = ["MAX_QUERY_CHARS", "Adjust", "Retriever", "Exclude"]

if TYPE_CHECKING:
    import scipy.sparse as sp

log = logging.getLogger(__name__)

MAX_QUERY_CHARS = 8_000
"""Longest query searched: a whole task of several steps fits many times over; beyond it the text
is a pasted document, whose words would only blur what is asked."""

def _requests(query: str, needs: Sequence[str]) -> list[str]:
    """The texts a search ranks by: the query, or its needs when it names several."""
    return list(needs) if len(needs) > 1 else [query]


def _texts(query: str, needs: Sequence[str], server_intent: str | None = None, tool_intent: str | None = None) -> list[str]:
    """The texts a search embeds: its requests (:func:`_requests`), then any hints."""
    return _requests(query, needs) + [t for t in (server_intent, tool_intent) if t]


# One thread beside the caller's, for the query's learned sparse encoding (see Retriever.search).
_SPARSE_POOL = ThreadPoolExecutor(1, thread_name_prefix="votr-splade")


class Retriever(NullRequests):
    """Hybrid tool retrieval over one catalog. Immutable: ``with_*`` methods return new retrievers."""

    adjust: Adjust | None = None  # set by :meth:`with_learning` only

    def __init__(self, catalog: Catalog, lexical: LexicalIndex, dense: DenseIndex | None, *, embedder: Embedder | None,
                 cache: EmbeddingCache, config: RetrievalConfig, calibration: Calibration | None,
                 features: ToolFeatures | None = None, names: Mapping[ToolKey, str] | None = None,
                 rerank: RerankModel | None = None, adapter: Adapts | None = None,
                 request_model: RequestModel | None = None) -> None:
        self.catalog = catalog
        self.request_model = request_model
        self.config = config
        self.calibration = calibration
        self.rerank = rerank
        self.adapter = adapter
        self.embedder = embedder
        self.cache = cache
        self._lexical = lexical
        self._dense = dense
        self.call_names: Mapping[ToolKey, str] = names if names is not None else call_names(t.key for t in catalog)
        self._features = features if features is not None else ToolFeatures.of(catalog)
        servers = list(catalog.servers)
        self._server_name_tokens = [content_tokens(s) for s in servers]
        self._server_row = {s: i for i, s in enumerate(servers)}
        self._server_of = np.fromiter((self._server_row[t.server] for t in catalog), dtype=np.intp, count=len(catalog))
        self._null: NDArray[np.float64] | None = None  # abstention scores of the null requests here
        self._bank: NDArray[np.float32] | None = None  # the null requests' vectors (what chat reads like)

    # ---- construction -------------------------------------------------------------------------

    @classmethod
    def build(cls, catalog: Catalog, *, embedder: Embedder | None = None, cache: EmbeddingCache | None = None,
              config: RetrievalConfig | None = None,
              calibration: Calibration | None | Literal["shipped"] = "shipped",
              rerank: RerankModel | None | Literal["shipped"] = "shipped",
              adapter: Adapts | None | Literal["shipped"] = "shipped",
              request_model: RequestModel | None | Literal["shipped"] = "shipped") -> Retriever:
        """Index a catalog. Without an embedder the retriever is lexical-only (``dense_ready`` False)
        until :meth:`with_embedder`; ``"shipped"`` uses the packaged calibration.json / rerank.json /
        query_adapter.npz / tool_request.npz."""
        if len(catalog) == 0:
            raise RetrievalError("cannot build a retriever over an empty catalog; load at least one tool")
        cache = cache if cache is not None else MemoryEmbeddingCache()
        dense = build_dense(catalog, embedder, cache) if embedder is not None else None
        if calibration == "shipped":
            calibration = shipped_calibration()
        if rerank == "shipped":
            rerank = shipped_rerank()
        if adapter == "shipped":
            adapter = shipped_adapter()
        if request_model == "shipped":
            request_model = shipped_request_model()
        return cls(catalog, build_lexical(catalog), dense, embedder=embedder, cache=cache,
                   config=config or RetrievalConfig(), calibration=calibration, rerank=rerank, adapter=adapter,
                   request_model=request_model)

    def _copy(self, **changes: object) -> Retriever:
        new = object.__new__(Retriever)
        new.__dict__.update(self.__dict__)
        new.__dict__.update(changes)
        new._null = None  # another config, calibration or embedder scores the null requests anew
        if "embedder" in changes:
            new._bank = None
        return new

    def with_catalog(self, catalog: Catalog) -> Retriever:
        """A retriever over a new catalog; only tools whose embedded text changed are re-embedded."""
        return Retriever.build(catalog, embedder=self.embedder if self._dense is not None else None, cache=self.cache,
                               config=self.config, calibration=self.calibration, rerank=self.rerank, adapter=self.adapter,
                               request_model=self.request_model)

    def with_tools_changed(self, changed: Sequence[Tool] = (), removed: Collection[ToolKey] = ()) -> Retriever:
        """A retriever with some tools replaced, added or removed, without a full rebuild: untouched
        rows are reused, changed rows are computed against the existing vocabulary and idf (new words
        count only after the next full :meth:`with_catalog`), their vectors come from the cache."""
        pending = {t.key: t for t in changed}
        gone = set(removed)
        tools: list[Tool] = []
        rows: list[int | None] = []
        for i, tool in enumerate(self.catalog):
            if tool.key in gone:
                continue
            if tool.key in pending:
                tools.append(pending.pop(tool.key))
                rows.append(None)
            else:
                tools.append(tool)
                rows.append(i)
        for tool in pending.values():
            tools.append(tool)
            rows.append(None)
        if not tools:
            raise RetrievalError("removing these tools would leave the catalog empty")
        catalog = Catalog(tools)
        lexical = restack_lexical(self._lexical, catalog, rows)
        dense = None
        if self._dense is not None and self.embedder is not None:
            dense = restack_dense(self._dense, catalog, rows, self.embedder, self.cache)
        return Retriever(catalog, lexical, dense, embedder=self.embedder, cache=self.cache, config=self.config,
                         calibration=self.calibration, features=self._features.restack(catalog, rows), rerank=self.rerank,
                         adapter=self.adapter, request_model=self.request_model,
                         # Same keys (a changed definition, the usual list_changed case): same call names.
                         names=self.call_names if len(self.call_names) == len(catalog) and all(
                             t.key in self.call_names for t in catalog) else None)

    def warm(self) -> Retriever:
        """Score the null requests now (about a second), so the first search after a change does not
        pay for the catalog's abstention threshold; returns this retriever."""
        if self.dense_ready:
            self.abstain_threshold()
        return self

    def with_embedder(self, embedder: Embedder, cache: EmbeddingCache | None = None) -> Retriever:
        """This catalog with dense vectors (embeds what the cache lacks; blocking)."""
        cache = cache if cache is not None else self.cache
        return self._copy(embedder=embedder, cache=cache, _dense=build_dense(self.catalog, embedder, cache))

    def with_config(self, config: RetrievalConfig) -> Retriever:
        """Same indexes, other stage switches/weights (cheap: nothing is rebuilt)."""
        return self._copy(config=config)

    def with_adapter(self, adapter: Adapts | None) -> Retriever:
        return self._copy(adapter=adapter)

    # ---- learning from use: the one hook (votr_mcp.learning) ---------------------------------

    def with_learning(self, examples: Callable[[DenseIndex], DenseIndex] | None, adjust: Adjust | None) -> Retriever:
        """This retriever with learned example requests in its dense index (``examples`` maps the
        catalog's own index to one with them) and ``adjust`` applied to every ranking's head scores.
        The abstention threshold stays the catalog's own (learning moves no null request's evidence
        enough to re-score them on every update)."""
        base = self.__dict__.get("_base_dense", self._dense)
        if self._dense is not None:
            # Computed once on the catalog's own retriever and shared by every learned one (a learned
            # retriever is made per search: it must not embed the null requests again).
            self.null_scores()
            self._chat_bank()
        new = self._copy(_dense=examples(base) if examples is not None and base is not None else base,
                         _base_dense=base, adjust=adjust)
        new._null = self._null
        return new

    @property
    def dense_index(self) -> DenseIndex | None:
        """The dense index searched (None until dense is ready)."""
        return self._dense

    @property
    def dense_models(self) -> int:
        """How many embedding models the dense vectors join (0 when dense is not ready)."""
        return 0 if self._dense is None else max(1, len(self._dense.slices))

    @property
    def learned_sparse_ready(self) -> bool:
        return self._dense is not None and self._dense.splade is not None

    @property
    def dense_ready(self) -> bool:
        return self._dense is not None

    @property
    def tool_vectors(self) -> NDArray[np.float32] | None:
        """The tool matrix the dense list scores against (None when dense is not ready)."""
        if self._dense is None:
            return None
        return self._dense.tool2vec_matrix() if self.config.tool2vec else self._dense.tools

    def __repr__(self) -> str:
        return f"Retriever({len(self.catalog)} tools, dense={'ready' if self.dense_ready else 'off'})"

    # ---- query embedding ----------------------------------------------------------------------

    def needs_of(self, query: str) -> list[str]:
        """The needs a query names (``[query]`` when it names one, or decomposition is off)."""
        return split_needs(query, self.config.max_needs) if self.config.decompose else [query]

    def texts_for(self, query: str, server_intent: str | None = None, tool_intent: str | None = None) -> list[str]:
        """Every text :meth:`search` embeds for this query, so a caller can embed many queries at once:
        the query, or its needs when it names several (the whole query's vector is then their mean),
        and the halves a bare "and" may split it into."""
        needs = self.needs_of(query)
        return _texts(query, needs, server_intent, tool_intent) + self._halves(query, needs)

    def _halves(self, query: str, needs: Sequence[str]) -> list[str]:
        """The two halves of a one-need request that a bare "and" may split (needs.and_halves), else none."""
        if len(needs) > 1 or not self.config.decompose or not self.config.dense or self._dense is None:
            return []
        return and_halves(query) or []

    def embed(self, texts: Sequence[str], cache: EmbeddingCache | None = None) -> dict[str, NDArray[np.float32]]:
        """Query vectors keyed by text, in one encode call (empty when dense is not ready). The model
        reads each text as :func:`query_dense_text` gives it, and a request to keep a fact with its
        frame as well (index.frames); ``cache`` (evaluation runs) keeps them."""
        if self.embedder is None or self._dense is None or not texts:
            return {}
        unique = list(dict.fromkeys(texts))
        read = [query_dense_text(t) for t in unique]
        frames = {i: f for i, t in enumerate(read) for f in [fact_frame(t)] if f is not None}
        batch = read + list(frames.values())
        matrix = embed_cached(self.embedder, batch, cache) if cache is not None else self.embedder.encode(batch)
        vectors = dict(zip(unique, matrix[: len(unique)]))
        for j, i in enumerate(frames):
            vectors[unique[i]] = with_frame(matrix[i], matrix[len(unique) + j])
        return vectors

    def request_vectors(self, texts: Sequence[str],
                        cache: EmbeddingCache | None = None) -> dict[str, NDArray[np.float32]]:
        """Each text's dense vector as a one-need search scores it (before any query adapter)."""
        return self.embed(texts, cache)

    # ---- search -------------------------------------------------------------------------------

    def search(self, query: str, *, server_intent: str | None = None, tool_intent: str | None = None,
               max_results: int | None = None, exclude: Exclude = (),
               query_vectors: Mapping[str, NDArray[np.float32]] | None = None) -> SearchResult:
        """Find the tools for a query. ``query_vectors`` may carry precomputed vectors by text
        (see :meth:`texts_for`); texts missing from it are embedded in one call."""
        if not isinstance(query, str) or not query.strip():
            raise RetrievalError("the query is empty; describe the action you need, e.g. 'list open pull requests'")
        if len(query) > MAX_QUERY_CHARS:
            raise RetrievalError(f"the query is {len(query):,} characters long; describe what you need in at most "
                                 f"{MAX_QUERY_CHARS:,} (the tools' arguments go to call_tool, not here)")
        if max_results is not None and max_results < 1:
            raise RetrievalError(f"max_results must be at least 1, got {max_results}")
        cfg = self.config
        use_dense = cfg.dense and self._dense is not None
        needs = self.needs_of(query)
        halves = self._halves(query, needs)  # embedded and encoded with the query, ranked if it has a tool
        texts = _texts(query, needs, server_intent, tool_intent) + halves
        # The learned sparse vectors of the texts ranked are encoded on another thread while the
        # dense models run here (numpy releases the GIL in its matrix products).
        pending = _SPARSE_POOL.submit(self._sparse_queries, list(dict.fromkeys([query, *needs, *halves]))) if use_dense else None
        vectors = self._vectors(query, needs, texts, query_vectors, use_dense)
        allowed = allowed_mask(exclude, self.catalog)
        hint = hint_scores(server_intent, tool_intent, vectors if use_dense else {}, self._lexical, self._dense,
                           self._server_name_tokens, self._server_of)
        ranked = [query] if len(needs) == 1 else [query, *needs]
        # (Still beside the sparse encoding: the pass over the tool matrix is the other half of the wait.)
        # The query adapter was fit on whole requests; a task's need fragments ("then email it to
        # Bob") and their mean are ranked unadapted: adapted, human-mcpzero's dev chains went .714 -> .571.
        scored = self._dense_scores([(t, vectors.get(t)) for t in ranked] if use_dense else [], adapt=len(needs) == 1)
        sparse = pending.result() if pending is not None else None
        whole = self._rank(query, vectors.get(query) if use_dense else None, allowed, hint, sparse=sparse,
                           scored=scored.get(query))
        handoff = HandOff(self.catalog, self.call_names, cfg, self.calibration, self._dense, use_dense,
                          self.abstain_threshold() if use_dense else None)
        if len(needs) == 1:
            split = self._two_needs(halves, vectors, sparse, handoff, allowed, hint) if halves and len(whole.order) else None
            if split is None:
                return handoff.single(query, whole, max_results)
            needs, rankings = halves, split
        else:
            rankings = [self._rank(n, vectors.get(n) if use_dense else None, allowed, hint, cfg.rerank_needs, sparse,
                                   scored.get(n)) for n in needs]
        rankings = cohere_needs(whole, rankings, self._server_of, cfg.need_server_weight)
        merged = merge_task(whole, rankings, self._server_of, len(self._server_row), cfg)
        return handoff.multi(query, needs, whole, rankings, merged, max_results)

    def _two_needs(self, halves: list[str], vectors: Mapping[str, NDArray[np.float32]],
                   sparse: Mapping[str, sp.csr_matrix] | None, handoff: HandOff, allowed: NDArray[np.bool_] | None,
                   hint: Sequence[NDArray[np.float64]]) -> list[Ranking] | None:
        """The rankings of the two halves of a request joined by a bare "and" (needs.and_halves) when
        they are two needs: neither abstains and their first tools differ. Else None, one need:
        "read report.txt and show me its contents" names one tool twice, and in "list my files and
        explain recursion to me" no tool serves the second half. Test split (eval/RESULTS.md,
        2026-11-27): chain success pooled over the human-style sets .693 -> .716, MSC-Bench .702 ->
        .718, no top-1 or abstention figure moved; on the dev rows, with the calibration of the time,
        human-registry .800 -> .850, human-mcpzero .714 -> .857, the personal catalog .750 -> .875."""
        if any(h not in vectors for h in halves):
            return None
        scored = self._dense_scores([(h, vectors[h]) for h in halves], adapt=False)  # (as any need: unadapted)
        rankings = [self._rank(h, vectors[h], allowed, hint, self.config.rerank_needs, sparse, scored.get(h))
                    for h in halves]
        firsts = [int(r.order[0]) if len(r.order) else -1 for r in rankings]
        if -1 in firsts or firsts[0] == firsts[1] or any(handoff.decide(r, None)[0] == 0 for r in rankings):
            return None
        return rankings

    def _vectors(self, query: str, needs: Sequence[str], texts: Sequence[str],
                 given: Mapping[str, NDArray[np.float32]] | None, use_dense: bool) -> dict[str, NDArray[np.float32]]:
        """Vectors by text for one search: ``given`` plus what is missing, and the whole task's mean."""
        vectors: dict[str, NDArray[np.float32]] = dict(given or {})
        if use_dense:
            vectors.update(self.embed([t for t in texts if t not in vectors]))
            if len(needs) > 1 and all(n in vectors for n in needs):
                vectors[query] = whole_vector(needs, vectors)
        return vectors

    def rerank_candidates(self, query: str, *, query_vectors: Mapping[str, NDArray[np.float32]] | None = None,
                          size: int | None = None) -> tuple[list[ToolKey], NDArray[np.float64]]:
        """The fused head of one query text (rerank not applied) and its rerank feature rows: the
        material :func:`votr_mcp.retrieval.rerank.fit_rerank` learns from."""
        use_dense = self.config.dense and self._dense is not None
        needs = self.needs_of(query)
        vectors = self._vectors(query, needs, _texts(query, needs), query_vectors, use_dense)
        vec = vectors.get(query) if use_dense else None
        if vec is not None and len(needs) == 1:  # (as search adapts it)
            vec = self._adapted(query, vec)
        f = fuse(query, vec, self._lexical, self._dense, self.config, None, (),
                 self._sparse_queries([query]).get(query) if vec is not None else None)
        head = fused_head(f, size or self.config.rerank_head)
        return [self.catalog[int(i)].key for i in head], self._head_features(QueryView.of(query, f.tokens), f, head)
