"""SPLADE-tiny in numpy against transformers' BertForMaskedLM (the oracle), and its packed cache rows."""

import numpy as np
import pytest
from scipy import sparse

from votr_mcp.index.catalog_index import splade_rows
from votr_mcp.index.dense import MemoryEmbeddingCache
from votr_mcp.index.splade import DOC_TERMS, SpladeEncoder, pack, splade_model_dir, unpack_rows

pytestmark = pytest.mark.slow

TEXTS = [
    "show the last 3 commits of my repository",
    "git log: Shows the commit logs",
    "what time is it in Tokyo",
    "Überprüfe die Wettervorhersage für 東京",
    "a",
]


def test_numpy_splade_matches_bert_for_masked_lm_with_max_pooled_log_relu():
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    folder = str(splade_model_dir())
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModelForMaskedLM.from_pretrained(folder).eval()
    batch = tokenizer(TEXTS, return_tensors="pt", padding=True, truncation=True, max_length=64)
    with torch.no_grad():
        logits = model(**batch).logits
    expected = (torch.log1p(torch.relu(logits)) * batch["attention_mask"].unsqueeze(-1)).max(dim=1).values.numpy()
    got = SpladeEncoder().encode(TEXTS).toarray()
    assert got.shape == expected.shape
    assert np.abs(got - expected).max() < 1e-4


def test_splade_expands_a_request_towards_words_it_does_not_contain():
    enc = SpladeEncoder()
    row = enc.encode(["what time is it in Tokyo"])
    vocab = enc._tokenizer.get_vocab()
    weights = {t: row[0, i] for t, i in vocab.items() if row[0, i] > 0}
    assert weights["tokyo"] > 1.0 and weights.get("japan", 0) > 0.5  # "japan" is not in the text


def test_packed_rows_keep_the_strongest_terms_and_round_trip_through_the_cache():
    enc = SpladeEncoder()
    rows = enc.encode(TEXTS, limit=128)
    packed = np.stack([pack(rows[i]) for i in range(rows.shape[0])])
    assert packed.shape == (len(TEXTS), 2 * DOC_TERMS) and packed.dtype == np.float32
    back = unpack_rows(packed, enc.vocabulary_size)
    for i in range(len(TEXTS)):
        kept = min(DOC_TERMS, rows[i].nnz)
        strongest = np.sort(rows[i].data)[::-1][:kept]
        assert np.allclose(np.sort(back[i].data)[::-1], strongest)
    cache = MemoryEmbeddingCache()
    first = splade_rows(enc, TEXTS, cache)
    assert sparse.issparse(first) and (abs(first - back) > 1e-6).nnz == 0

    class Refuses(SpladeEncoder):
        def encode(self, texts, *, limit=64):
            raise AssertionError("cached rows must not be encoded again")

    again = splade_rows(Refuses(), TEXTS, cache)
    assert (abs(again - first) > 1e-6).nnz == 0


def test_an_empty_list_of_texts_gives_an_empty_matrix():
    assert SpladeEncoder().encode([]).shape == (0, SpladeEncoder().vocabulary_size)
