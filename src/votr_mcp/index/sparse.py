"""SPLADE-lite: a TF-IDF index over unigrams and bigrams with sublinear tf.

Not learned term expansion, just the cheap part of the idea: bigrams such as "pull request"
or "send email" weigh more than their words apart, and log-scaled tf stops one repeated word
from dominating. Rows are L2-normalised, so a query's score is a cosine.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from sklearn.feature_extraction.text import TfidfVectorizer

from votr_mcp.index.tokenize import tokenize

__all__ = ["SparseIndex", "unigrams_and_bigrams"]


def unigrams_and_bigrams(text: str) -> list[str]:
    """Tokens of the shared tokenizer plus adjacent pairs joined by a space."""
    words = tokenize(text)
    return words + [f"{a} {b}" for a, b in zip(words, words[1:])]


class SparseIndex:
    """Cosine scores of a query against documents in TF-IDF (1-2 gram, sublinear tf) space."""

    def __init__(self, docs: Sequence[str]) -> None:
        if not docs:
            raise ValueError("SparseIndex needs at least one document; the catalog is empty")
        self._vectorizer = TfidfVectorizer(analyzer=unigrams_and_bigrams, sublinear_tf=True, dtype=np.float32)
        try:
            self._matrix = self._vectorizer.fit_transform(list(docs)).tocsr()
        except ValueError:  # every document is empty after tokenizing
            self._matrix = None
        self.n_docs = len(docs)

    def scores(self, query: str) -> NDArray[np.float32]:
        """Cosine similarity of the query to every document."""
        if self._matrix is None:
            return np.zeros(self.n_docs, dtype=np.float32)
        q = self._vectorizer.transform([query])
        if q.nnz == 0:
            return np.zeros(self.n_docs, dtype=np.float32)
        return np.asarray((self._matrix @ q.T).todense(), dtype=np.float32).ravel()
