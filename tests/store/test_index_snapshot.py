"""The index snapshot a restart loads instead of rebuilding (store/index_snapshot.py, server/stored_index.py)."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import pytest

from votr_mcp.catalog import Catalog
from votr_mcp.retrieval.pipeline import Retriever
from votr_mcp.server.stored_index import StoredIndex, snapshot_path
from votr_mcp.store import Store
from votr_mcp.store.index_snapshot import catalog_token, load_index, save_index

QUERIES = ["read a file from disk", "create an issue in a repository", "weather alerts for a state", "hello, how are you?"]


def _results(retriever: Retriever) -> list[object]:
    out = []
    for query in QUERIES:
        found = retriever.search(query)
        out.append(([(h.tool.key, h.score) for h in found.hits], found.abstained))
    return out


@pytest.mark.slow
def test_a_loaded_snapshot_answers_exactly_as_the_retriever_that_was_saved(tmp_path: Path, catalog: Catalog, minilm: object) -> None:
    with Store.open(tmp_path / "registry.sqlite3") as store:
        store.registry.sync(catalog)
        built = Retriever.build(catalog, embedder=minilm, cache=store.vectors)  # type: ignore[arg-type]
        built.abstain_threshold()
        token = catalog_token(store)
        save_index(built, tmp_path / "index", token)
        loaded = load_index(tmp_path / "index", token, minilm.model_id)  # type: ignore[attr-defined]
        assert loaded is not None
        loaded.embedder, loaded.cache = minilm, store.vectors
        assert _results(loaded) == _results(built)


def test_a_snapshot_of_another_catalog_state_or_model_is_not_loaded(tmp_path: Path, catalog: Catalog) -> None:
    with Store.open(tmp_path / "registry.sqlite3") as store:
        store.registry.sync(catalog)
        token = catalog_token(store)
        save_index(Retriever.build(catalog), tmp_path / "index", token)
        assert load_index(tmp_path / "index", token, None) is not None
        assert load_index(tmp_path / "index", token, "another-model") is None
        store.registry.sync(Catalog(dataclasses.replace(t, description="Read a file and mail it.") if t.name == "read_file" else t
                                    for t in catalog))
        assert catalog_token(store) != token  # a held change is a new catalog state
        store.registry.accept("filesystem__read_file")
        assert load_index(tmp_path / "index", catalog_token(store), None) is None


def test_a_snapshot_that_would_run_code_is_refused(tmp_path: Path) -> None:
    class Sneaky:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            import os

            return (os.system, ("true",))

    path = tmp_path / "index"
    save_index(_tiny(), path, "t")  # a valid header to start from
    header = path.read_bytes().split(b"\n", 2)
    path.write_bytes(header[0] + b"\n" + header[1] + b"\n" + pickle.dumps({"catalog": Sneaky()}))
    assert load_index(path, "t", None) is None


def test_the_server_saves_the_index_once_and_the_next_start_loads_it(tmp_path: Path, catalog: Catalog) -> None:
    with Store.open(tmp_path / "registry.sqlite3") as store:
        store.registry.sync(catalog)
        first = StoredIndex.open(store, "model")
        assert first.loaded is None and snapshot_path(store) == Path(f"{tmp_path / 'registry.sqlite3'}.index")
        lexical = Retriever.build(store.registry.catalog(include_held=True), cache=store.vectors)
        first.save(lexical)  # not dense: nothing worth saving
        assert not first.path.exists()
        save_index(lexical, first.path, first.token)
        again = StoredIndex.open(store, None)  # type: ignore[arg-type]
        assert again.loaded is not None
        assert _results(again.lexical()) == _results(lexical)
        assert again.path.stat().st_mode & 0o077 == 0  # owner-only


def _tiny() -> Retriever:
    from votr_mcp.catalog import Tool

    return Retriever.build(Catalog([Tool("s", "t", "A tool.", {"type": "object"})]))
