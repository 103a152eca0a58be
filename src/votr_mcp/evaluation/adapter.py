"""The harness's view of the real retrieval pipeline: one Retriever per catalog, one variant per config.

All variants share the catalog's indexes (``Retriever.with_config`` rebuilds nothing) and the
same query vectors, so an ablation costs only the searches themselves. Query vectors are cached
by text hash next to the tool vectors, so a second run embeds nothing it has seen.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from votr_mcp.catalog import Catalog, load_catalog
from votr_mcp.catalog.models import ToolKey
from votr_mcp.evaluation.data import catalog_of
from votr_mcp.evaluation.harness import Returned, Unit
from votr_mcp.index.dense import EmbeddingCache, FileEmbeddingCache, MemoryEmbeddingCache
from votr_mcp.index.known_examples import examples_of
from votr_mcp.index.models import default_embedder
from votr_mcp.retrieval import STAGES, Calibration, RetrievalConfig, Retriever, naive_hybrid
from votr_mcp.retrieval.query_adapter import CrossFitted, QueryAdapter

__all__ = ["FULL", "NAIVE", "PipelineFactory", "PipelineSearcher", "inert_stages", "variant_configs"]

log = logging.getLogger(__name__)

FULL = "full"
NAIVE = "naive hybrid"


def variant_configs(base: RetrievalConfig, ablation: bool, skip: Mapping[str, str] | None = None) -> dict[str, RetrievalConfig]:
    """The full pipeline; with ``ablation``, full minus each enabled stage ("- stage"), full plus
    each stage the shipped config leaves off ("+ stage", so a dropped stage stays visible), then
    the naive hybrid. Stages in ``skip`` cannot act and are left out."""
    variants = {FULL: base}
    if ablation:
        for stage in STAGES:
            if stage in (skip or {}):
                continue
            if getattr(base, stage):
                variants[f"- {stage}"] = base.without(stage)
            else:
                variants[f"+ {stage}"] = base.with_(**{stage: True})
        variants[NAIVE] = naive_hybrid()
    return variants


def inert_stages(retriever: Retriever) -> dict[str, str]:
    """Stages that cannot change any result on this catalog and calibration, and why.

    Switching them off would only repeat the full pipeline's figures at the cost of a whole pass.
    """
    inert: dict[str, str] = {}
    if not any(examples_of(tool) for tool in retriever.catalog):
        inert["tool2vec"] = "no tool in this catalog has example queries"
    if retriever.adapter is None:
        inert["query_adapter"] = "no query adapter shipped"
    if retriever.calibration is None:
        inert["adaptive_k"] = "no calibration: k is fixed either way"
    if retriever.calibration is None or retriever.calibration.action_gate is None:
        inert["action_gate"] = "the calibration has no action gate"
    if retriever.dense_models < 2:
        inert["multilingual"] = "the dense vectors are one model's"
    if not retriever.learned_sparse_ready:
        inert["splade"] = "no learned sparse vectors (SPLADE weights not installed)"
    return inert


def _load(data: Path) -> Catalog:
    """A set folder's tools.jsonl, or any catalog path; problems are logged, the rest loads."""
    return load_catalog(catalog_of(data)).require_tools(log, most=5)


class PipelineSearcher:
    """One pipeline variant: searches by query text alone (intent fields are never passed)."""

    def __init__(self, retriever: Retriever) -> None:
        self.retriever = retriever

    def search(self, unit: Unit, vectors: Mapping[str, NDArray[np.float32]] | None) -> Returned:
        start = time.perf_counter()
        result = self.retriever.search(unit.query, query_vectors=vectors)
        elapsed = (time.perf_counter() - start) * 1000.0
        # Token counting is measurement, not search: it stays out of the timed part.
        return Returned(tuple(result.ranked_keys), tuple(result.hit_keys), result.tokens(), elapsed,
                        result.hits[0].tier if result.hits else "none")


class PipelineFactory:
    """Variants of the pipeline over one catalog, and the query vectors they all use."""

    def __init__(self, retriever: Retriever, *, ablation: bool = False, cache: EmbeddingCache | None = None) -> None:
        if not retriever.dense_ready:
            log.warning("the retriever has no embedder: evaluating the lexical stages only")
        self.retriever = retriever
        self.cache = cache if cache is not None else MemoryEmbeddingCache()
        self.inert = inert_stages(retriever)
        self.configs = variant_configs(retriever.config, ablation, self.inert)

    @classmethod
    def from_catalog(cls, catalog: Catalog, *, calibration: Path | Calibration | None | str = "shipped",
                     cache_dir: Path | None = None, ablation: bool = False,
                     config: RetrievalConfig | None = None,
                     adapter: QueryAdapter | None | str = "shipped") -> PipelineFactory:
        """Index ``catalog`` with the real MiniLM model (vectors cached under ``cache_dir``)."""
        cache: EmbeddingCache = FileEmbeddingCache(cache_dir) if cache_dir is not None else MemoryEmbeddingCache()
        if isinstance(calibration, Path):
            calibration = Calibration.load(calibration)
        # SPLADE is built only where a variant can use it (the ablation's "+ splade", or a config with it on).
        splade = ablation or (config or RetrievalConfig()).splade
        retriever = Retriever.build(catalog, embedder=default_embedder(sparse=splade), cache=cache, config=config,
                                    calibration=calibration, adapter=adapter)  # type: ignore[arg-type]
        return cls(retriever, ablation=ablation, cache=cache)

    @classmethod
    def from_data(cls, data: Path, *, distractors: Sequence[Path] = (), **options: object) -> PipelineFactory:
        """The catalog of a benchmark set folder (its tools.jsonl), or of any catalog folder
        (captured tools/list JSON files, such as the project's registry/) when it has no tools.jsonl.

        ``distractors`` are more catalogs whose tools join the search (never gold): retrieval at a
        larger scale. A tool whose (server, name) the set already has is left out (the Catalog keeps
        the first of each key)."""
        own = _load(data)
        catalog = Catalog([*own, *(t for extra in distractors for t in _load(extra))])
        if distractors:
            log.info("%d distractor tools added (%d left out: their (server, name) was already there)",
                     len(catalog) - len(own), len(catalog.duplicates))
        return cls.from_catalog(catalog, **options)  # type: ignore[arg-type]

    def cross_fit_adapter(self) -> None:
        """Search the dev rows that fitted the shipped query adapter as new rows: each text adapted by
        the fit that left its fold out (see votr_mcp.retrieval.query_adapter). For the rerank and
        calibration fits; a no-op when the retriever has no adapter with held-out fits."""
        self.retriever = self.cross_fitted().retriever

    def cross_fitted(self) -> PipelineFactory:
        """This factory with the query adapter cross-fitted (:meth:`cross_fit_adapter`), sharing its
        indexes and vectors; itself when the adapter has no held-out fits. For figures on dev rows:
        read with the map they fitted, human-mcpzero's dev top-1 was .784 where its test rows got
        .613 (adapter off: .503 and .531), so a dev figure said more about the map than the pipeline."""
        adapter = self.retriever.adapter
        if not (isinstance(adapter, QueryAdapter) and adapter.held_out):
            return self
        other = copy.copy(self)
        other.retriever = self.retriever.with_adapter(adapter.cross_fitted())
        return other

    def variants(self) -> list[str]:
        return list(self.configs)

    def searcher(self, variant: str) -> PipelineSearcher:
        if variant not in self.configs:
            raise ValueError(f"unknown variant '{variant}'; choose one of {', '.join(self.configs)}")
        return PipelineSearcher(self.retriever.with_config(self.configs[variant]))

    def embed(self, units: Sequence[Unit]) -> list[Mapping[str, NDArray[np.float32]]]:
        """Per unit, the vectors of every text any variant embeds for it, from one cached batch."""
        if not self.retriever.dense_ready or self.retriever.embedder is None:
            return [{} for _ in units]
        variants = [self.retriever.with_config(c) for c in self.configs.values() if c.dense]
        per_unit = [list(dict.fromkeys(t for v in variants for t in v.texts_for(u.query))) for u in units]
        texts = list(dict.fromkeys(t for texts in per_unit for t in texts))
        by_text = self.retriever.embed(texts, self.cache)
        return [{t: by_text[t] for t in texts} for texts in per_unit]

    def not_ablated(self) -> dict[str, str]:
        return dict(self.inert)

    def has_tool(self, key: ToolKey) -> bool:
        return key in self.retriever.catalog

    def tool_count(self) -> int:
        """How many tools the catalog searched holds (distractors included)."""
        return len(self.retriever.catalog)

    def nominal_coverage(self) -> float | None:
        """The coverage the calibration promises (None without one: fixed k promises nothing)."""
        cal = self.retriever.calibration
        return None if cal is None else float(cal.coverage)

    def describe(self) -> str:
        r, cal = self.retriever, self.retriever.calibration
        on = [s for s in STAGES if getattr(r.config, s)]
        off = [s for s in STAGES if not getattr(r.config, s)]
        fitted = "none (fixed k, no abstention)" if cal is None else (
            f"coverage {cal.coverage:.2f}, fitted on {cal.n_rows} rows ({cal.source})")
        crossed = "; query adapter: each text read by its fit that left the text's fold out" if isinstance(
            r.adapter, CrossFitted) else ""
        return (f"stages on: {', '.join(on)}" + (f"; off: {', '.join(off)}" if off else "")
                + f"; RRF weights dense {r.config.w_dense}, BM25 {r.config.w_bm25}, sparse {r.config.w_sparse}"
                + f"{crossed}; calibration: {fitted}.")
