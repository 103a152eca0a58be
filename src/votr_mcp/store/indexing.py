"""Incremental indexing: embed what is new, then record the harvest, resumably.

Order matters for crash safety. Vectors are computed first, in batches, each batch committed
to the store as soon as it is encoded (keyed by the hash of the text embedded), so a run
killed part way keeps its finished batches and the next run embeds only the rest. The
harvest itself (servers, tools, history, change control) is then recorded in one
transaction: the tools table always shows either the previous harvest or this one.

Held-back versions are embedded like any other (the harvest is embedded before change
control looks at it), so accepting one later is instant.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from votr_mcp.catalog import Catalog
from votr_mcp.store.records import SyncReport
from votr_mcp.store.store import Store
from votr_mcp.store.vectors import VectorStore

if TYPE_CHECKING:
    from votr_mcp.index.dense import Embedder

__all__ = ["IndexReport", "CheckpointEmbedder", "dense_texts", "index_catalog", "Progress"]

log = logging.getLogger(__name__)


def text_hash(text: str) -> str:
    """SHA-256 (hex) of the exact text embedded: the same key as ``votr_mcp.index.dense.text_hash``.

    Repeated here because importing ``votr_mcp.index`` loads scikit-learn and scipy (seconds),
    which `votr-mcp tools` and a server's store start-up must not pay; a test checks both agree.
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()

Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after each embedded batch."""


@dataclass(frozen=True, slots=True)
class IndexReport:
    """What one index run did."""

    tools: int
    embedded: int  # tool texts embedded in this run (held-back versions included)
    servers_embedded: int  # server description/summary texts embedded in this run
    seconds: float
    sync: SyncReport

    def as_json(self) -> dict[str, Any]:
        """``{"tools", "embedded", "seconds"}`` first, then what changed."""
        out: dict[str, Any] = {"tools": self.tools, "embedded": self.embedded, "seconds": round(self.seconds, 3)}
        out["servers_embedded"] = self.servers_embedded
        out.update({k: v for k, v in self.sync.as_dict().items() if k != "tools"})
        return out


class CheckpointEmbedder:
    """An :class:`Embedder` that encodes in batches and commits each batch to the store.

    Wrapping the model this way makes any caller that embeds through it resumable, and
    counts how many texts were really encoded (the incremental tests count these).
    """

    def __init__(self, inner: Embedder, vectors: VectorStore, *, batch_size: int = 64, progress: Progress | None = None) -> None:
        self.inner = inner
        self.vectors = vectors
        self.batch_size = batch_size
        self.progress = progress
        self.encoded = 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        parts: list[NDArray[np.float32]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start:start + self.batch_size])
            vectors = np.asarray(self.inner.encode(batch), dtype=np.float32)
            self.vectors.put_many(self.model_id, {text_hash(t): v for t, v in zip(batch, vectors)})
            self.encoded += len(batch)
            parts.append(vectors)
            if self.progress is not None:
                self.progress(min(start + self.batch_size, len(texts)), len(texts))
        if not parts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.concatenate(parts)


def dense_texts(catalog: Catalog) -> tuple[list[str], list[str]]:
    """(tool texts, server texts) the dense stage embeds for ``catalog``, without repeats.

    Exactly the texts of the retriever's dense stage (``votr_mcp.index.dense_texts``: tools,
    server descriptions, server summaries, then example queries), plus the null requests its
    abstention compares a catalog with (``votr_mcp.retrieval.null_model``), so a retriever built
    over the store's vectors finds every one of them cached.
    """
    from votr_mcp.index import dense_texts as retrieval_dense_texts
    from votr_mcp.index.text import query_dense_text
    from votr_mcp.retrieval.null_model import null_requests

    texts = retrieval_dense_texts(catalog)
    n, m = len(catalog), len(catalog.servers)
    tools = list(dict.fromkeys([*texts[:n], *texts[n + 2 * m:]]))
    servers = list(dict.fromkeys([*texts[n:n + 2 * m], *(query_dense_text(t) for t in null_requests())]))
    return tools, servers


def index_catalog(
    store: Store,
    catalog: Catalog,
    embedder: Embedder,
    *,
    trust: str | Mapping[str, str] | None = None,
    remove_missing: bool = True,
    prune_servers: bool = False,
    source: str = "",
    batch_size: int = 64,
    progress: Progress | None = None,
    texts: Callable[[Catalog], tuple[list[str], list[str]]] = dense_texts,
) -> IndexReport:
    """Embed the texts of ``catalog`` missing from the store, then record the harvest.

    ``trust``, ``remove_missing`` and ``prune_servers`` are passed to
    :meth:`~votr_mcp.store.registry.Registry.sync`.
    """
    started = time.perf_counter()
    run = store.begin_run(source)
    tool_texts, server_text_list = texts(catalog)
    todo_tools = _missing(store.vectors, embedder.model_id, tool_texts)
    todo_servers = _missing(store.vectors, embedder.model_id, server_text_list)
    total = len(todo_tools) + len(todo_servers)
    if total:
        log.info("embedding %d tool texts and %d server texts (%d already in the store)",
                 len(todo_tools), len(todo_servers), len(tool_texts) + len(server_text_list) - total)

    def overall(done: int, _: int, offset: int = 0) -> None:
        if progress is not None:
            progress(offset + done, total)

    checkpoint = CheckpointEmbedder(embedder, store.vectors, batch_size=batch_size, progress=overall)
    checkpoint.encode(todo_tools)
    checkpoint.progress = lambda done, n: overall(done, n, offset=len(todo_tools))
    checkpoint.encode(todo_servers)
    sync = store.registry.sync(catalog, trust=trust, remove_missing=remove_missing, prune_servers=prune_servers)
    store.finish_run(run, tools=len(catalog), embedded=len(todo_tools))
    return IndexReport(len(catalog), len(todo_tools), len(todo_servers), time.perf_counter() - started, sync)


def _missing(vectors: VectorStore, model_id: str, texts: Sequence[str]) -> list[str]:
    found = vectors.get_many(model_id, [text_hash(t) for t in texts])
    return [t for t in texts if text_hash(t) not in found]
