import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from votr_mcp.index.bm25 import BM25Index, idf_okapi
from votr_mcp.index.tokenize import tokenize

DOCS = [
    "list pull requests of a github repository",
    "create a new issue in a github repository",
    "send an email message to a recipient",
    "read the contents of a file from disk",
    "write text to a file on disk",
    "search the web for a query and return results",
    "get the current weather forecast for a city",
    "convert currency amounts using exchange rates",
    "delete all files in a directory",
    "query a postgres database with sql",
    "schedule a calendar event with attendees",
]


def test_bm25_scores_match_rank_bm25_on_every_document_and_query():
    corpus = [tokenize(d) for d in DOCS]
    oracle = BM25Okapi(corpus)
    index = BM25Index(corpus)
    for query in ["github pull request", "file disk", "weather city forecast", "email", "unknown words only", "file file write"]:
        tokens = tokenize(query)
        np.testing.assert_allclose(index.scores(tokens), oracle.get_scores(tokens), rtol=1e-9, atol=1e-12)


def test_bm25_ranks_the_matching_document_first():
    index = BM25Index([tokenize(d) for d in DOCS])
    assert int(np.argmax(index.scores(tokenize("send email")))) == 2


def test_negative_idf_is_floored_like_rank_bm25():
    idf = idf_okapi(4, np.array([4.0, 1.0, 1.0]), epsilon=0.25)
    raw = np.log(4 - np.array([4.0, 1.0, 1.0]) + 0.5) - np.log(np.array([4.0, 1.0, 1.0]) + 0.5)
    assert idf[0] == pytest.approx(0.25 * raw.mean())
    assert idf[1] == pytest.approx(raw[1])


def test_a_term_is_named_in_some_documents_only_where_one_of_them_has_it():
    index = BM25Index([tokenize(d) for d in DOCS])
    email, issue = DOCS.index("send an email message to a recipient"), DOCS.index("create a new issue in a github repository")
    assert index.named_in(["email"], [email, issue]) and index.named_in(["zzz", "issue"], [issue])
    assert not index.named_in(["email"], [issue])  # in the corpus, but not in these documents
    assert not index.named_in(["zzz"], range(len(DOCS))) and not index.named_in(["email"], [])


def test_bm25_refuses_an_empty_corpus_with_a_clear_message():
    with pytest.raises(ValueError, match="at least one document"):
        BM25Index([])


def test_tfidf_matches_scikit_learns_sublinear_smoothed_tfidf_cosines():
    from sklearn.feature_extraction.text import TfidfVectorizer

    from votr_mcp.index.sparse import SparseIndex, unigrams_and_bigrams

    oracle = TfidfVectorizer(analyzer=unigrams_and_bigrams, sublinear_tf=True)
    matrix = oracle.fit_transform(DOCS)
    index = SparseIndex(DOCS)
    for query in ["send an email message", "delete files in a directory", "github pull request list", "nothing matches zzz"]:
        expected = (matrix @ oracle.transform([query]).T).toarray().ravel()
        np.testing.assert_allclose(index.scores(query), expected, rtol=1e-5, atol=1e-6)
