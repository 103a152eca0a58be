"""Incremental indexing with the real model: what is embedded, and what is not."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from votr_mcp.catalog import Catalog
from votr_mcp.index.dense import text_hash
from votr_mcp.index.text import tool_dense_text
from votr_mcp.store import Store, dense_texts, index_catalog

pytestmark = pytest.mark.slow


def test_a_first_index_embeds_every_tool_and_server_text_once(store: Store, catalog: Catalog, embedder: Any) -> None:
    report = index_catalog(store, catalog, embedder)
    tool_texts, server_texts = dense_texts(catalog)
    assert (report.tools, report.embedded, report.servers_embedded) == (12, 12, len(server_texts))
    assert sorted(embedder.texts) == sorted(tool_texts + server_texts)
    assert store.vectors.count(embedder.model_id) == len(set(tool_texts + server_texts))


def test_unchanged_tools_are_never_re_embedded(store_file: Path, catalog: Catalog, embedder: Any) -> None:
    with Store.open(store_file) as store:
        index_catalog(store, catalog, embedder)
    embedder.texts.clear()
    with Store.open(store_file) as store:  # a restart: the vectors come from the file
        report = index_catalog(store, catalog, embedder)
    assert (report.embedded, report.servers_embedded, embedder.texts) == (0, 0, [])


def test_a_changed_tool_is_re_embedded_alone(store: Store, catalog: Catalog, embedder: Any) -> None:
    index_catalog(store, catalog, embedder)
    embedder.texts.clear()
    changed = Catalog(dataclasses.replace(t, description="Weather alerts for any region of the world.")
                      if t.name == "get_alerts" else t for t in catalog)
    report = index_catalog(store, changed, embedder)
    assert embedder.texts == [tool_dense_text(changed.get(("weather", "get_alerts")))]  # type: ignore[arg-type]
    assert (report.embedded, report.sync.changed, report.sync.held) == (1, 1, 1)


def test_a_held_back_version_is_embedded_so_acceptance_is_instant(store: Store, catalog: Catalog, embedder: Any) -> None:
    index_catalog(store, catalog, embedder)
    changed = Catalog(dataclasses.replace(t, description="Run SQL and also drop tables.") if t.name == "run_query" else t
                      for t in catalog)
    report = index_catalog(store, changed, embedder)
    assert report.embedded == 1 and ("postgres", "run_query") in store.registry.withheld()
    tool = changed.get(("postgres", "run_query"))
    assert tool is not None
    assert text_hash(tool_dense_text(tool)) in store.vectors.get_many(embedder.model_id, [text_hash(tool_dense_text(tool))])


def test_sqlite_vec_knn_ranks_like_numpy_cosine(sqlite_store: Store, catalog: Catalog, embedder: Any) -> None:
    index_catalog(sqlite_store, catalog, embedder)
    keys, matrix = sqlite_store.vectors.matrix(embedder.model_id)
    query = embedder.encode(["will it rain in Paris tomorrow"])[0]
    expected = [keys[i] for i in np.argsort(-(matrix @ query))[:5]]
    got = sqlite_store.vectors.knn(embedder.model_id, query, 5)
    assert [key for key, _ in got] == expected
    assert got[0][1] == pytest.approx(1 - float(matrix[keys.index(expected[0])] @ query), abs=1e-5)
    forecast = text_hash(tool_dense_text(catalog.get(("weather", "get_forecast"))))  # type: ignore[arg-type]
    assert forecast in expected[:3]


def test_a_retriever_built_over_the_store_embeds_nothing(store_file: Path, catalog: Catalog, embedder: Any) -> None:
    from votr_mcp.retrieval import Retriever

    with Store.open(store_file) as store:
        index_catalog(store, catalog, embedder)
    embedder.texts.clear()
    with Store.open(store_file) as store:  # a restart, as `votr-mcp serve --store` does
        retriever = Retriever.build(store.registry.catalog(), embedder=embedder, cache=store.vectors)
        assert embedder.texts == []
        result = retriever.search("will it rain in Paris tomorrow")
        assert embedder.texts == ["will it rain in Paris tomorrow"]  # only the query was embedded
    # The ranking, not the hand-off: whether k is 0 here is the calibration's business.
    assert result.dense_used and result.ranked[0].tool.server == "weather"
