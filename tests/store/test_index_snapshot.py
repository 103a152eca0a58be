"""The index snapshot a restart loads instead of rebuilding (store/index_snapshot.py, server/stored_index.py)."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import numpy as np
import pytest

from votr_mcp.catalog import Catalog
from votr_mcp.retrieval.pipeline import Retriever
from votr_mcp.server.stored_index import StoredIndex, snapshot_path
from votr_mcp.store import Store
from votr_mcp.store.index_snapshot import PackedTools, catalog_token, load_index, save_index

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
        assert list(loaded.catalog) == list(built.catalog)  # every field of every tool, in order
        assert loaded.catalog.servers == built.catalog.servers and loaded.catalog.duplicates == built.catalog.duplicates


def test_a_loaded_catalog_makes_a_tool_only_when_it_is_read_and_keeps_it(tmp_path: Path, catalog: Catalog) -> None:
    from votr_mcp.catalog import Tool

    odd = Tool("odd", "numbered", "A tool with a numpy number.", {"type": "object"}, extra={"score": np.float64(0.5)})
    tools = Catalog([*catalog, odd])
    save_index(Retriever.build(tools), tmp_path / "index", "t")
    loaded = load_index(tmp_path / "index", "t", None)
    assert loaded is not None
    packed = loaded.catalog._tools
    assert isinstance(packed, PackedTools) and packed._made.count(None) == len(tools)
    assert list(loaded.catalog.tool_keys()) == [t.key for t in tools] and packed._made.count(None) == len(tools)
    assert loaded.catalog[3] == tools[3] and loaded.catalog[3] is loaded.catalog[3]
    assert loaded.catalog[-1] == odd and loaded.catalog.get(odd.key) is loaded.catalog[-1]
    assert type(loaded.catalog[-1].extra["score"]) is np.float64  # not a float, as marshal would make it
    assert packed._made.count(None) == len(tools) - 2
    assert loaded.catalog[1:3] == tools[1:3]
    with pytest.raises(IndexError):
        loaded.catalog[len(tools)]
    assert list(loaded.catalog) == list(tools) and None not in packed._made
    save_index(loaded, tmp_path / "again", "t")  # a loaded catalog saves as it was loaded
    again = load_index(tmp_path / "again", "t", None)
    assert again is not None and list(again.catalog) == list(tools)


def test_the_arrays_of_a_loaded_snapshot_are_read_from_the_file_in_place(tmp_path: Path, catalog: Catalog) -> None:
    built = Retriever.build(catalog)
    save_index(built, tmp_path / "index", "t")
    loaded = load_index(tmp_path / "index", "t", None)
    assert loaded is not None
    idf = loaded._lexical.bm25.idf
    assert np.array_equal(idf, built._lexical.bm25.idf) and not idf.flags.owndata and not idf.flags.writeable
    assert idf.ctypes.data % 64 == 0  # on a cache line, as the file lays it out


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


def test_the_server_starts_on_a_loaded_catalog_without_making_its_tools(tmp_path: Path, catalog: Catalog) -> None:
    from votr_mcp.catalog import call_names
    from votr_mcp.server.live_index import Snapshot

    built = Retriever.build(catalog)
    save_index(built, tmp_path / "index", "t")
    loaded = load_index(tmp_path / "index", "t", None)
    assert loaded is not None
    view = Snapshot.of(loaded.catalog, loaded, 0)
    assert loaded.catalog._tools._made.count(None) == len(catalog)  # nothing made yet
    assert dict(view.names) == dict(call_names(t.key for t in catalog))
    name = view.names[catalog[5].key]
    assert view.by_name[name] == catalog[5] and view.by_name.get("nobody__nothing") is None
    assert loaded.catalog._tools._made.count(None) == len(catalog) - 1
    assert dict(view.by_name) == dict(Snapshot.of(catalog, built, 0).by_name)


def test_a_retriever_changed_after_a_load_saves_each_tool_once_and_loads_as_it_answered(tmp_path: Path, catalog: Catalog) -> None:
    save_index(Retriever.build(catalog), tmp_path / "index", "t")
    loaded = load_index(tmp_path / "index", "t", None)
    assert loaded is not None
    changed = loaded.with_tools_changed([dataclasses.replace(catalog[2], description="Read a file and mail it.")])
    save_index(changed, tmp_path / "changed", "t")
    again = load_index(tmp_path / "changed", "t", None)
    assert again is not None and _results(again) == _results(changed)
    assert again._features.views._tools is again.catalog  # the views read the catalog's tools: no second copy
