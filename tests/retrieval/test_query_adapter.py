import numpy as np
import pytest

from votr_mcp.errors import RetrievalError
from votr_mcp.index.dense import MINILM_ID
from votr_mcp.index.models import default_embedder
from votr_mcp.retrieval import RetrievalConfig, Retriever
from votr_mcp.retrieval.query_adapter import QueryAdapter, fold_of, shipped_adapter

RNG = np.random.default_rng(0)


def _adapter(scale: float, dim: int = 8, rank: int = 2, **kw) -> QueryAdapter:
    u = RNG.normal(size=(dim, rank)).astype(np.float32)
    v = (scale * RNG.normal(size=(rank, dim))).astype(np.float32)
    return QueryAdapter(u, v, MINILM_ID, **kw)


def _flip() -> QueryAdapter:
    """U·V = −2·I sends q to −q: every cosine of a MiniLM query vector changes sign."""
    return QueryAdapter(np.eye(384, dtype=np.float32), -2 * np.eye(384, dtype=np.float32), MINILM_ID)


def test_a_zero_correction_leaves_the_query_vector_as_it_is():
    q = RNG.normal(size=8).astype(np.float32)
    q /= np.linalg.norm(q)
    assert np.allclose(_adapter(0.0).adapt("any text", q), q)


def test_the_adapted_vector_is_the_normalised_corrected_one():
    a = _adapter(1.0)
    q = RNG.normal(size=8).astype(np.float32)
    expected = q + q @ a.u @ a.v
    out = a.adapt("x", q)
    assert np.isclose(np.linalg.norm(out), 1.0, atol=1e-6)
    assert np.allclose(out, expected / np.linalg.norm(expected), atol=1e-6)


def test_save_and_load_keep_the_map_and_its_held_out_fits(tmp_path):
    a = _adapter(1.0, source="test fit", held_out=(_adapter(1.0), _adapter(1.0), _adapter(1.0)))
    a.save(tmp_path / "a.npz")
    b = QueryAdapter.load(tmp_path / "a.npz")
    assert b.source == "test fit" and b.model_id == MINILM_ID and len(b.held_out) == 3
    assert np.array_equal(a.u, b.u) and np.array_equal(a.v, b.v)
    assert all(np.array_equal(x.v, y.v) for x, y in zip(a.held_out, b.held_out))


def test_cross_fitting_adapts_each_text_by_the_fit_that_left_its_fold_out():
    parts = tuple(_adapter(1.0) for _ in range(3))
    crossed = _adapter(1.0, held_out=parts).cross_fitted()
    q = RNG.normal(size=8).astype(np.float32)
    texts = [f"query number {i}" for i in range(12)]
    assert len({fold_of(t, 3) for t in texts}) == 3
    for t in texts:
        assert np.allclose(crossed.adapt(t, q), parts[fold_of(t, 3)].adapt(t, q))
    with pytest.raises(RetrievalError, match="fit-adapter"):
        _adapter(1.0).cross_fitted()


def test_bad_adapter_files_and_shapes_are_refused_with_the_command_that_mends_them(tmp_path):
    (tmp_path / "broken.npz").write_bytes(b"not a numpy archive")
    with pytest.raises(RetrievalError, match="votr-mcp fit-adapter"):
        QueryAdapter.load(tmp_path / "broken.npz")
    with pytest.raises(RetrievalError, match="shapes"):
        QueryAdapter(np.zeros((8, 2), np.float32), np.zeros((3, 8), np.float32), MINILM_ID)


def test_the_shipped_adapter_fits_the_default_models_vectors_and_carries_held_out_fits_for_cross_fitting():
    shipped, model = shipped_adapter(), default_embedder()
    assert shipped is not None and shipped.model_id == model.model_id and shipped.dim == model.dimension
    assert len(shipped.held_out) >= 2 and "votr-mcp fit-adapter" in shipped.source


@pytest.mark.slow
def test_the_pipeline_ranks_by_the_adapted_vector_only_when_the_stage_is_on(small_catalog, embedder):
    # The flip turns the dense list upside down, so the top tool must change.
    flip = _flip()
    dense_only = RetrievalConfig(bm25=False, sparse=False, rerank=False, decompose=False, query_adapter=True)
    plain = Retriever.build(small_catalog, embedder=embedder, calibration=None, config=dense_only, adapter=None)
    flipped = plain.with_adapter(flip)
    query = "show me the open pull requests of my repo"
    assert plain.search(query).ranked_keys[0] == ("github", "list_pull_requests")
    assert flipped.search(query).ranked_keys[0] != ("github", "list_pull_requests")
    assert flipped.with_config(dense_only.without("query_adapter")).search(query).ranked_keys == plain.search(query).ranked_keys
    other_model = QueryAdapter(flip.u, flip.v, "some-other-model")
    assert plain.with_adapter(other_model).search(query).ranked_keys == plain.search(query).ranked_keys


@pytest.mark.slow
def test_abstention_reads_the_query_vector_before_the_adapter(small_catalog, embedder):
    # The flip turns every cosine's sign: read from the adapted vector, the best cosine over the
    # catalog would be what was the worst.
    flip = _flip()
    dense_only = RetrievalConfig(bm25=False, sparse=False, rerank=False, decompose=False, query_adapter=True)
    plain = Retriever.build(small_catalog, embedder=embedder, calibration=None, config=dense_only, adapter=None)
    query = "show me the open pull requests of my repo"
    before, after = plain.search(query), plain.with_adapter(flip).search(query)
    assert after.ranked_keys[0] != before.ranked_keys[0]
    assert after.evidence["top_minilm"] == pytest.approx(before.evidence["top_minilm"], abs=1e-6)
    assert before.evidence["top_minilm"] > 0.3


@pytest.mark.slow
def test_a_tasks_needs_are_ranked_by_their_unadapted_vectors(small_catalog, embedder):
    flip = _flip()
    config = RetrievalConfig(bm25=False, sparse=False, rerank=False, query_adapter=True)
    plain = Retriever.build(small_catalog, embedder=embedder, calibration=None, config=config, adapter=None)
    flipped = plain.with_adapter(flip)
    task = "list the open pull requests of my repo, then email the list to my team"
    assert len(plain.needs_of(task)) == 2
    assert flipped.search(task).ranked_keys == plain.search(task).ranked_keys
    one = "show me the open pull requests of my repo"
    assert flipped.search(one).ranked_keys != plain.search(one).ranked_keys
