"""The Retriever's abstention bar in its own catalog (:mod:`votr_mcp.retrieval.null_model`): how the
null requests score here, the threshold a request must reach, and the request-level features the
evidence adds (how much a request reads like chat, whether it asks for a tool at all)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from votr_mcp.retrieval.null_model import chat_similarity, null_requests
from votr_mcp.retrieval.ranking import TextRanker
from votr_mcp.retrieval.tool_request import NEUTRAL, request_log_odds

if TYPE_CHECKING:
    from votr_mcp.index.dense import EmbeddingCache
    from votr_mcp.retrieval.calibration import Calibration
    from votr_mcp.retrieval.tool_request import RequestModel

__all__ = ["NullRequests"]


class NullRequests(TextRanker):
    """Abstention over one catalog, computed once per retriever (``_null``, ``_bank``)."""

    calibration: Calibration | None
    request_model: RequestModel | None
    cache: EmbeddingCache
    _null: NDArray[np.float64] | None
    _bank: NDArray[np.float32] | None

    if TYPE_CHECKING:  # the Retriever's query embedding (pipeline.py)
        def embed(self, texts: Sequence[str], cache: EmbeddingCache | None = None) -> dict[str, NDArray[np.float32]]: ...

    def null_evidence(self) -> list[Mapping[str, float]]:
        """The abstention evidence of the null requests (retrieval/null_model.py) in this catalog
        (about a second: one batch of embeddings and ~120 rankings; empty without dense)."""
        if self._dense is None or not self.config.dense:
            return []
        texts = list(null_requests())
        vectors = self.embed(texts, self.cache)
        scored = self._dense_scores([(t, vectors.get(t)) for t in texts])  # all in one pass, as their sparse vectors
        sparse = self._sparse_queries(texts) if vectors else None
        return [self._rank(t, vectors.get(t), None, (), sparse=sparse, scored=scored.get(t)).evidence for t in texts]

    def _chat_similarity(self, text: str, vec: NDArray[np.float32] | None) -> float:
        """The best cosine of a request with the null requests (:func:`chat_similarity`)."""
        if vec is None:
            return 0.0
        bank = self._chat_bank()
        return 0.0 if bank is None else chat_similarity(bank, text, vec)

    def _chat_bank(self) -> NDArray[np.float32] | None:
        """The null requests' vectors, embedded once per retriever (None when dense is not ready)."""
        if self._bank is None:
            texts = list(null_requests())
            vectors = self.embed(texts, self.cache)
            if len(vectors) != len(texts):
                return None
            self._bank = np.stack([vectors[t] for t in texts])
        return self._bank

    def _tool_request(self, vec: NDArray[np.float32] | None) -> float:
        """The request model's log-odds that a request asks for a tool (:func:`request_log_odds`)."""
        return NEUTRAL if vec is None else request_log_odds(self.request_model, self.embedder, vec)

    def null_scores(self) -> NDArray[np.float64]:
        """The calibration's abstention scores of the null requests in this catalog, computed once."""
        if self._null is None:
            cal = self.calibration
            if cal is None:
                return np.zeros(0)
            self._null = np.array([cal.abstain_score(e) for e in self.null_evidence()])
        return self._null

    def abstain_threshold(self) -> float | None:
        """The abstention score a request must reach in this catalog: the calibration's quantile of
        the null requests' scores when it has one, else its fixed threshold, and at least its floor
        (None: no calibration)."""
        cal = self.calibration
        if cal is None:
            return None
        return cal.bar(None if cal.null_quantile is None else self.null_scores())
