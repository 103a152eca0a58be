"""The coarse first pass of a large catalog's dense scores (index/coarse.py, retrieval/dense_scores.py),
on the embedded registry's real MiniLM + USE vectors with the large-catalog path switched on.

Every registry tool lends example requests, and a tool with examples is always scored exactly
(its Tool2Vec row), so these retrievers leave Tool2Vec off: otherwise no score would be coarse."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from votr_mcp.catalog import Catalog, default_registry_path, load_catalog
from votr_mcp.index import catalog_index, coarse
from votr_mcp.index.coarse import CoarsePass, candidates
from votr_mcp.index.models import default_embedder
from votr_mcp.retrieval import RetrievalConfig, Retriever
from votr_mcp.retrieval import dense_scores as scoring

REQUESTS = ["show the last 3 commits of my repository", "what time is it in Tokyo", "wie spät ist es in Tokio",
            "list the files in my home folder, then read README.md and commit it", "book a flight to Paris",
            "take a screenshot of https://example.com"]


@pytest.fixture(scope="module")
def joint():
    return default_embedder()


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(default_registry_path()).catalog


CONFIG = RetrievalConfig(tool2vec=False)


@pytest.fixture(scope="module")
def registry(joint, catalog):
    return Retriever.build(catalog, embedder=joint, config=CONFIG)


@pytest.fixture()
def large(monkeypatch):
    """The registry's 132 tools taken down the path of a catalog of 20k and more, keeping 30 a query."""
    monkeypatch.setattr(scoring, "SPLIT_TOOLS", 1)
    monkeypatch.setattr(coarse, "KEEP", 30)
    monkeypatch.setattr(catalog_index, "COARSE_TOOLS", 1)


def test_the_coarse_scores_keep_the_catalogs_mean_and_with_the_hidden_variance_its_spread(registry):
    d = registry.dense_index
    parts = d.slices
    fitted = CoarsePass.fit(d.tools, parts)  # on every row: 132 are fewer than FIT_ROWS
    vectors = registry.embed(REQUESTS)
    queries = np.stack([vectors[r] for r in REQUESTS])
    reduced, base = fitted.query_rows(queries, parts)
    rough = [np.empty((len(queries), len(d.tools)), dtype=np.float32) for _ in parts]
    fitted.fill(reduced, base, rough, 0, len(d.tools))
    exact = queries @ d.tools.T
    approximate = np.sum(rough, axis=0)
    assert np.abs(approximate - exact).max() > 1e-3  # a quarter of the dimensions: not the same scores
    np.testing.assert_allclose(approximate.mean(axis=1), exact.mean(axis=1), atol=1e-5)
    short = exact.std(axis=1) - approximate.std(axis=1)
    assert (short > 0).all()
    hidden = np.array([fitted.hidden_variance(q) for q in queries])
    np.testing.assert_allclose(np.sqrt(approximate.var(axis=1) + hidden), exact.std(axis=1), rtol=1e-4)


def test_the_tools_kept_for_exact_scores_hold_each_querys_best_by_the_joint_cosine_and_by_each_model(registry, large):
    d = registry.dense_index
    fitted = CoarsePass.fit(d.tools, d.slices)
    vectors = registry.embed(REQUESTS)
    queries = np.stack([vectors[r] for r in REQUESTS])
    reduced, base = fitted.query_rows(queries, d.slices)
    rough = [np.empty((len(queries), len(d.tools)), dtype=np.float32) for _ in d.slices]
    fitted.fill(reduced, base, rough, 0, len(d.tools))
    kept = set(candidates(rough, len(queries)).tolist())
    assert len(kept) < len(d.tools)
    exact = [queries[:, sl] @ d.tools[:, sl].T for sl in d.slices]
    for j in range(len(queries)):
        assert int(np.argmax(sum(e[j] for e in exact))) in kept
        assert all(int(np.argmax(e[j])) in kept for e in exact)


def test_a_search_through_the_coarse_pass_ranks_and_tiers_as_the_exact_one(registry, catalog, joint, large):
    approximate = Retriever.build(catalog, embedder=joint, config=CONFIG)  # COARSE_TOOLS is 1 here: a coarse pass
    assert approximate.dense_index.coarse is not None and registry.dense_index.coarse is None
    for request in REQUESTS:
        got, expected = approximate.search(request), registry.search(request)
        assert [h.key for h in got.ranked] == [h.key for h in expected.ranked], request
        assert [h.tier for h in got.hits] == [h.tier for h in expected.hits], request
        np.testing.assert_allclose([h.score for h in got.ranked], [h.score for h in expected.ranked], rtol=1e-4, atol=1e-6)
        assert got.abstained == expected.abstained


def test_what_a_search_reads_is_scored_exactly_and_the_rest_is_marked(registry, large):
    d = dataclasses.replace(registry.dense_index, coarse=CoarsePass.fit(registry.dense_index.tools, registry.dense_index.slices))
    request = "show the last 3 commits of my repository"
    vector = registry.embed([request])[request]
    scored = scoring.dense_scores(d, registry.config, [(request, vector)])[0]
    assert scored.approximate is not None and scored.approximate.any() and not scored.approximate.all()
    exact = d.tools @ vector
    rough = np.flatnonzero(scored.approximate)
    assert not np.allclose(scored.joint[rough], exact[rough], atol=1e-4)
    np.testing.assert_allclose(scored.joint[~scored.approximate], exact[~scored.approximate], atol=1e-5)
    scoring.exact_rows(d, scored, vector, rough[:5])
    np.testing.assert_allclose(scored.joint[rough[:5]], exact[rough[:5]], atol=1e-5)
    for sl, model in zip(d.slices, scored.models):
        np.testing.assert_allclose(model[rough[:5]], len(d.slices) * (d.tools[rough[:5], sl] @ vector[sl]), atol=1e-5)
    assert not scored.approximate[rough[:5]].any() and scored.approximate[rough[5:]].all()


def test_a_changed_tool_keeps_the_directions_and_projects_its_own_row(registry, catalog, joint, large):
    built = Retriever.build(catalog, embedder=joint, config=CONFIG)
    tool = catalog[7]
    changed = built.with_tools_changed([dataclasses.replace(tool, description="Delete every cached thumbnail.")])
    before, after = built.dense_index, changed.dense_index
    assert before.coarse is not None and after.coarse is not None
    assert all(a is b for a, b in zip(after.coarse.bases, before.coarse.bases))
    expected = before.coarse.with_rows(after.tools, after.slices).reduced
    np.testing.assert_allclose(after.coarse.reduced, expected, atol=1e-5)
    row = [t.key for t in changed.catalog].index(tool.key)
    assert not np.allclose(after.coarse.reduced[row], before.coarse.reduced[7])


def test_an_index_snapshot_keeps_the_coarse_pass(tmp_path, catalog, joint, large):
    from votr_mcp.store.index_snapshot import load_index, save_index

    built = Retriever.build(catalog, embedder=joint, config=CONFIG)
    built.abstain_threshold()
    save_index(built, tmp_path / "index", "token")
    loaded = load_index(tmp_path / "index", "token", joint.model_id)
    assert loaded is not None
    loaded.embedder, loaded.cache = joint, built.cache
    kept, saved = loaded.dense_index.coarse, built.dense_index.coarse
    assert kept is not None and saved is not None
    np.testing.assert_array_equal(kept.reduced, saved.reduced)
    np.testing.assert_array_equal(kept.hidden, saved.hidden)
    for request in REQUESTS[:3]:  # (a query embedded twice may differ in the last bits: BLAS threads)
        got, expected = loaded.search(request).hits, built.search(request).hits
        assert [h.key for h in got] == [h.key for h in expected]
        np.testing.assert_allclose([h.score for h in got], [h.score for h in expected], rtol=1e-5)
