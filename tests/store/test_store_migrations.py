"""Numbered migrations: from empty, from the previous version, and refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from votr_mcp.catalog import Catalog, canonical_definition, canonical_json, content_hash, server_hash
from votr_mcp.errors import StoreError
from votr_mcp.store import SCHEMA_VERSION, Store
from votr_mcp.store.migrations import MIGRATIONS


def tables(store: Store) -> set[str]:
    return {name for (name,) in store.conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}


def test_a_new_store_is_created_at_the_latest_schema_version(store_file: Path) -> None:
    with Store.open(store_file) as store:
        numbers = [n for (n,) in store.conn.execute("SELECT number FROM migrations ORDER BY number")]
        names = [n for (n,) in store.conn.execute("SELECT name FROM migrations ORDER BY number")]
        assert numbers == list(range(1, SCHEMA_VERSION + 1))
        assert names == [m.__name__ for m in MIGRATIONS]
        assert all(name.startswith(f"m{i:03d}_") for i, name in enumerate(names, start=1))
        assert {"servers", "tools", "tool_versions", "tool_decisions", "embeddings", "selection_events"} <= tables(store)
        assert store.conn.execute("PRAGMA journal_mode").fetchall()[0][0] == "wal"


def columns(store: Store, table: str) -> set[str]:
    return {row[1] for row in store.conn.execute(f"PRAGMA table_info({table})")}


def write_as_version_3(store: Store, catalog: Catalog) -> None:
    """The rows the registry of schema version 3 wrote for a first harvest (m004 adds hold_reasons, m005 tool_successors)."""
    conn, at = store.conn, "2025-01-01T00:00:00+00:00"
    for server in catalog.servers.values():
        conn.execute("INSERT INTO servers (name, description, summary, server_hash, first_seen, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                     (server.name, server.description, server.summary, server_hash(server), at, at))
    for tool in catalog:
        sid = conn.execute("SELECT id FROM servers WHERE name = ?", (tool.server,)).fetchall()[0][0]
        definition = canonical_json(canonical_definition(tool))
        conn.execute("INSERT INTO tool_versions (server_id, name, version, content_hash, definition, changed_fields, seen_at) "
                     "VALUES (?, ?, 1, ?, ?, '[]', ?)", (sid, tool.name, content_hash(tool), definition, at))
        vid = conn.last_insert_rowid()
        conn.execute("INSERT INTO tools (server_id, name, content_hash, definition, current_version_id, accepted_version_id, status, "
                     "updated_at) VALUES (?, ?, ?, ?, ?, ?, 'active', ?)", (sid, tool.name, content_hash(tool), definition, vid, vid, at))


def test_a_store_of_an_earlier_version_is_upgraded_and_keeps_its_data(store_file: Path, catalog: Catalog) -> None:
    with Store.open(store_file, upto=3) as old:
        assert "hold_reasons" not in columns(old, "tools") and "tool_successors" not in tables(old)
        write_as_version_3(old, catalog)
        old.vectors.put_many("model-x", {"abc": np.ones(4, dtype=np.float32) / 2})
    with Store.open(store_file) as store:
        assert "hold_reasons" in columns(store, "tools") and "tool_successors" in tables(store)
        assert [n for (n,) in store.conn.execute("SELECT max(number) FROM migrations")] == [SCHEMA_VERSION]
        assert [t.key for t in store.registry.catalog()] == [t.key for t in catalog]
        assert {(r.status, r.reasons) for r in store.registry.records()} == {("active", ())}
        report = store.registry.sync(catalog)  # the same harvest again: nothing new, changed or held
        assert (report.new, report.changed, report.held) == (0, 0, 0)
        assert store.vectors.get_many("model-x", ["abc"])["abc"].tolist() == [0.5] * 4


def test_opening_twice_applies_nothing_more(store_file: Path) -> None:
    Store.open(store_file).close()
    with Store.open(store_file) as store:
        assert store.conn.execute("SELECT count(*) FROM migrations").fetchall()[0][0] == SCHEMA_VERSION


def test_a_store_written_by_a_newer_votr_mcp_is_refused_with_a_clear_message(store_file: Path) -> None:
    with Store.open(store_file) as store:
        store.conn.execute("INSERT INTO migrations VALUES (?, 'm999_future', 'later')", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreError, match="newer|upgrade votr-mcp"):
        Store.open(store_file)


def test_a_file_that_is_not_a_store_gives_an_error_naming_it(tmp_path: Path) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_text("this is not a database\n" * 100)
    with pytest.raises(StoreError, match="notes.txt"):
        Store.open(junk)
    assert junk.read_text().startswith("this is not a database")  # nothing was lost


def test_the_tool_history_cannot_be_rewritten(store: Store, catalog: Catalog) -> None:
    store.registry.sync(catalog)
    with pytest.raises(Exception, match="immutable"):
        store.conn.execute("UPDATE tool_versions SET definition = '{}'")
    with pytest.raises(Exception, match="immutable"):
        store.conn.execute("DELETE FROM tool_versions")
    assert store.conn.execute("SELECT count(*) FROM tool_versions").fetchall()[0][0] == len(catalog)


def test_opening_a_store_does_not_load_the_retrieval_stack() -> None:
    import subprocess
    import sys

    code = ("import sys, votr_mcp.store, votr_mcp.cli.tools; s = votr_mcp.store.Store.open(':memory:'); "
            "print(sorted(m for m in ('sklearn', 'scipy', 'torch', 'sentence_transformers', 'mcp') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_store_keys_vectors_exactly_as_the_retriever_does() -> None:
    from votr_mcp.index.dense import text_hash as retriever_key
    from votr_mcp.store.indexing import text_hash as store_key

    for text in ("", "read file: Read the complete contents of a file.", "météo à Paris ☔"):
        assert store_key(text) == retriever_key(text)
