"""A restart of ``serve --store`` (no ``--config``) that loads the index it built last time.

``votr_mcp.store.index_snapshot`` keeps the built retriever beside the store. Here the server
uses it: at start the snapshot gives the catalog and the lexical index at once (no tool rows
read, nothing tokenized), and once the models are loaded the dense part is attached as it was
saved instead of being rebuilt from the store's vectors. When there is no usable snapshot the
server builds as before and saves one when its dense index is ready.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any

from votr_mcp.store.index_snapshot import attach_models, catalog_token, lexical_part, load_index, save_index

__all__ = ["StoredIndex"]

log = logging.getLogger(__name__)


class StoredIndex:
    """The snapshot of one store's index: what was loaded, and where to save the next one."""

    def __init__(self, store: Any, path: Path, token: str, loaded: Any) -> None:
        self.store = store
        self.path = path
        self.token = token
        self.loaded = loaded  # the retriever read from the snapshot (no models), or None

    @classmethod
    def open(cls, store: Any, model_id: str) -> StoredIndex:
        """Read the snapshot of ``store`` when it matches the store's catalog and ``model_id`` (blocking)."""
        path = snapshot_path(store)
        token = catalog_token(store)
        loaded = load_index(path, token, model_id)
        if loaded is not None:
            log.info("loaded the index of %d tools from %s", len(loaded.catalog), path)
        return cls(store, path, token, loaded)

    def lexical(self) -> Any:
        """What searches use until the models are loaded."""
        return lexical_part(self.loaded, self.store.vectors)

    def with_models(self, catalog: Any, embedder: Any) -> Any | None:
        """The loaded index with the models attached, when ``catalog`` is still the one it indexes."""
        if self.loaded is None or catalog is not self.loaded.catalog or not self.loaded.dense_ready:
            return None
        if getattr(embedder, "model_id", None) != self.loaded._dense.model_id:
            return None
        return attach_models(self.loaded, embedder, self.store.vectors)

    def save(self, searcher: Any) -> None:
        """Save ``searcher`` when it is a dense retriever of the catalog the store still holds (blocking)."""
        if not getattr(searcher, "dense_ready", False) or catalog_token(self.store) != self.token:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            save_index(searcher, self.path, self.token)
            log.info("saved the index of %d tools to %s for the next start", len(searcher.catalog), self.path)
        except OSError as exc:
            log.warning("could not save the index to %s (%s); the next start rebuilds it", self.path, exc)


def snapshot_path(store: Any) -> Path:
    """``<store file>.index``; for a database store, a file in the user cache dir named by its URL."""
    path = str(store.path)
    if "://" not in path and path != ":memory:":
        return Path(f"{path}.index")
    import platformdirs

    digest = hashlib.sha256(path.encode()).hexdigest()[:16]
    return Path(platformdirs.user_cache_dir("votr-mcp")) / "indexes" / f"{digest}.index"
