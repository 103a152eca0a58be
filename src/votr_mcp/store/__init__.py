"""The persistent registry: one SQLite file (apsw + sqlite-vec) with servers, tools, their
immutable history, change control against rug pulls, and the embedding cache.

``votr_mcp.store._sqlite`` is the only module that imports the SQLite driver.
"""

from votr_mcp.store.indexing import CheckpointEmbedder, IndexReport, dense_texts, index_catalog
from votr_mcp.store.migrations import LATEST as SCHEMA_VERSION
from votr_mcp.store.records import SyncReport, ToolRecord, VersionRecord, changed_fields
from votr_mcp.store.registry import Registry
from votr_mcp.store.store import MEMORY, Store, StoreChangeControl, default_store_path
from votr_mcp.store.vectors import VectorStore

__all__ = [
    "MEMORY",
    "SCHEMA_VERSION",
    "CheckpointEmbedder",
    "IndexReport",
    "Registry",
    "Store",
    "StoreChangeControl",
    "SyncReport",
    "ToolRecord",
    "VectorStore",
    "VersionRecord",
    "changed_fields",
    "default_store_path",
    "dense_texts",
    "index_catalog",
]
