"""SPLADE-lite: a TF-IDF index over unigrams and bigrams with sublinear tf.

Not learned term expansion, just the cheap part of the idea: bigrams such as "pull request"
or "send email" weigh more than their words apart, and log-scaled tf stops one repeated word
from dominating. Weights follow the usual smoothed form (as scikit-learn's TfidfVectorizer with
``sublinear_tf=True``): w = (1 + ln tf) · (ln((1 + N) / (1 + df)) + 1), rows L2-normalised, so a
query's score is a cosine. Written on scipy directly (no scikit-learn import, ~4 s under load)
and with a fixed vocabulary, so rows can be replaced one by one when a tool changes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from votr_mcp.index.tokenize import tokenize

__all__ = ["SparseIndex", "postings_sum", "unigrams_and_bigrams", "sublinear_tf", "smooth_idf"]


def postings_sum(postings: sp.csc_matrix, columns: Sequence[int] | NDArray[np.integer],
                 weights: Sequence[float] | NDArray[np.floating]) -> NDArray[np.float64]:
    """Each row's sum of ``weight * postings[row, column]`` over the given columns: the query's
    terms' postings lists laid end to end and summed per row in one pass (at 100k tools a query
    of ~100 SPLADE terms took 4 ms adding them list by list, 1 ms so). Rows add the terms in the
    order given, as a loop over them would."""
    spans = [(postings.indptr[c], postings.indptr[c + 1]) for c in columns]
    if not spans:
        return np.zeros(postings.shape[0])
    rows = np.concatenate([postings.indices[lo:hi] for lo, hi in spans])
    values = np.concatenate([float(w) * postings.data[lo:hi] for w, (lo, hi) in zip(weights, spans)])
    return np.bincount(rows, weights=values, minlength=postings.shape[0]).astype(np.float64, copy=False)


def unigrams_and_bigrams(text: str, words: Sequence[str] | None = None) -> list[str]:
    """Tokens of the shared tokenizer (or ``words`` already tokenized) plus adjacent pairs joined by a space."""
    words = list(tokenize(text) if words is None else words)
    return words + [f"{a} {b}" for a, b in zip(words, words[1:])]


def sublinear_tf(tf: NDArray[np.floating]) -> NDArray[np.float64]:
    """1 + ln(tf) for tf > 0 (Salton & Buckley 1988, 'sublinear tf scaling')."""
    return 1.0 + np.log(np.asarray(tf, dtype=np.float64))


def smooth_idf(n_docs: int, doc_freq: NDArray[np.floating]) -> NDArray[np.float64]:
    """ln((1 + N) / (1 + df)) + 1: never zero, as if one extra document held every term."""
    return np.log((1.0 + n_docs) / (1.0 + np.asarray(doc_freq, dtype=np.float64))) + 1.0


class SparseIndex:
    """Cosine scores of a query against documents in TF-IDF (1-2 gram, sublinear tf) space."""

    def __init__(self, docs: Sequence[str], tokens: Sequence[Sequence[str]] | None = None) -> None:
        if not docs:
            raise ValueError("SparseIndex needs at least one document; the catalog is empty")
        if tokens is None:
            grams = [Counter(unigrams_and_bigrams(d)) for d in docs]
        else:
            grams = [Counter(unigrams_and_bigrams("", words)) for words in tokens]
        vocab: dict[str, int] = {}
        for g in grams:
            for term in g:
                vocab.setdefault(term, len(vocab))
        doc_freq = np.zeros(max(len(vocab), 1))
        for g in grams:
            for term in g:
                doc_freq[vocab[term]] += 1
        self.vocab = vocab
        self.idf = smooth_idf(len(docs), doc_freq)
        self.n_docs = len(docs)
        rows: list[int] = []
        cols: list[int] = []
        vals: list[NDArray[np.float64]] = []
        for r, g in enumerate(grams):
            ids, w = self._weights(g)
            rows.extend([r] * len(ids))
            cols.extend(ids)
            vals.append(w)
        data = np.concatenate(vals) if vals else np.zeros(0)
        # Kept by column only (postings, what scoring reads); restack reads rows from it.
        self._postings = sp.csr_matrix((data, (rows, cols)), shape=(len(grams), len(self.idf))).tocsc()

    def _weights(self, grams: Counter[str]) -> tuple[list[int], NDArray[np.float64]]:
        ids = [self.vocab[t] for t in grams if t in self.vocab]
        tf = np.fromiter((grams[t] for t in grams if t in self.vocab), dtype=np.float64, count=len(ids))
        w = sublinear_tf(tf) * self.idf[ids]
        return ids, (w / np.linalg.norm(w) if len(ids) else w)

    def _row(self, grams: Counter[str]) -> sp.csr_matrix:
        ids, w = self._weights(grams)
        return sp.csr_matrix((w, ([0] * len(ids), ids)), shape=(1, len(self.idf)))

    def vector(self, text: str) -> sp.csr_matrix:
        """The L2-normalised TF-IDF row of a text over this index's vocabulary (unknown terms dropped)."""
        return self._row(Counter(unigrams_and_bigrams(text)))

    def scores(self, query: str) -> NDArray[np.float32]:
        """Cosine similarity of the query to every document."""
        ids, weights = self._weights(Counter(unigrams_and_bigrams(query)))
        return postings_sum(self._postings, ids, weights).astype(np.float32)

    def restack(self, rows: Sequence[int | str]) -> SparseIndex:
        """A new index whose row j is old row ``rows[j]`` (an int) or a new document (its text),
        in this index's vocabulary and idf (unknown terms ignored until the next full build)."""
        is_old = np.array([isinstance(r, (int, np.integer)) for r in rows], dtype=bool)
        old_rows = [int(r) for r in rows if isinstance(r, (int, np.integer))]
        parts = ([self._postings.tocsr()[old_rows]] if old_rows else []) + [self.vector(str(r)) for r in rows if not isinstance(r, (int, np.integer))]
        place = np.empty(len(rows), dtype=np.intp)
        place[np.flatnonzero(is_old)] = np.arange(len(old_rows))
        place[np.flatnonzero(~is_old)] = len(old_rows) + np.arange(len(rows) - len(old_rows))
        new = object.__new__(SparseIndex)
        new.__dict__.update(self.__dict__)
        matrix = sp.vstack(parts, format="csr")[place] if parts else sp.csr_matrix((0, len(self.idf)))
        new._postings = matrix.tocsc()
        new.n_docs = len(rows)
        return new
